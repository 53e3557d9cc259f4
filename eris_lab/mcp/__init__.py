"""The Model Context Protocol side: search/describe/execute meta-tools and the stdio server."""
