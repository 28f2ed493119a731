public enum PrismCLI {}
