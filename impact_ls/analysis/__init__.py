"""The impact pipeline, one module per stage; pipeline.py states their order."""
