"""oraclec's Python side: oraclec.launch runs the job an oraclec PyTorch
plan describes (python3 -m oraclec.launch --help)."""
