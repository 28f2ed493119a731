import Foundation
import Prism

exit(PrismCommandLine.main(Array(CommandLine.arguments.dropFirst())))
