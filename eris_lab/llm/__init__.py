"""Language models: llama.cpp in process (the bundled Gemma, any GGUF) and OpenAI-compatible servers."""

from .runner import *  # noqa: F401,F403
from .runner import __all__  # noqa: F401
