import PrismCore
