"""The grammar: one offer (or one JSON Schema) becomes one GBNF grammar for llama.cpp.

``compile(offer, catalog)`` builds the reply envelope whose ``tool_calls`` can name only the
offered tools, each locked to its own argument schema; ``compile_schema(schema)`` compiles a bare
JSON Schema. Every grammar is checked by llama.cpp's own parser before it is returned, and
``oracle`` judges acceptance with llama.cpp's grammar engine.
"""

from .compiler import Compiler, Grammar, compile_schema
from .envelope import STATUSES, compile

__all__ = ["Grammar", "Compiler", "compile", "compile_schema", "STATUSES"]
