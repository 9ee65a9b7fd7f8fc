"""Loading: bytes to text, text to documents with the exact position of every node (YAML, JSON, Dockerfiles, unrendered templates)."""
