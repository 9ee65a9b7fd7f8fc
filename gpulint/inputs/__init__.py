"""Discovery: which files and directories a scan reads, and as what (manifest, chart, kustomization, Dockerfile)."""
