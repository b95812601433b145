"""SIMULATOR STAND-IN for LlamaFactory, for TunePlane's tests only: see cli.py. Not LlamaFactory."""
