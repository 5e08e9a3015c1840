"""Language-model backends behind one interface (interface.py): in-process (CausalLM) and remote (remote.py, client.py).
May import: core, metrics (the judges' prompts and answer tokens, the LM scores' records)."""
