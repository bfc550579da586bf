EXAMPLES: dict[str, str] = {}
