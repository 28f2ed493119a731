print("prism")
