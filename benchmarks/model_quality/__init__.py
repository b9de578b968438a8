"""The model-quality report: small tool-use tasks on the embedded local model.

``python -m benchmarks.model_quality`` runs a fixed set of 20 tasks against llama-server
with Qwen2.5-Coder-0.5B, in native tool-call mode (leanloop's chat template) and in text
mode (the model's own template), with leanloop's small-model help on and off, and through
a plain LangChain ``create_agent`` loop for comparison. See ``README.md`` beside this file.
"""
