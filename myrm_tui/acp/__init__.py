"""The Agent Client Protocol front-end (``myrm acp``): editors drive myrm's agent over JSON-RPC on stdio."""
