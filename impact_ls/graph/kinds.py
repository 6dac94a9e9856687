"""Enum members as plain module globals, for the graph's hot loops.

On Python 3.11 a member read through its class (``NodeKind.CLASS``) runs the lookup hook
``EnumType.__getattr__`` installs: about 900 instructions against a few for a global. A one-job
cold index of a 219-file django subset read 305k members, 2 % of its instructions. Code that
runs per node, use or edge imports the members from here; everything else keeps the enum
spelling.
"""

from __future__ import annotations

from impact_ls.graph.facts import AccessKind
from impact_ls.model import DynamicKind, EdgeKind, NodeKind, ParamKind

ACCESS_READ = AccessKind.READ
ACCESS_WRITE = AccessKind.WRITE
DYNAMIC_COMPUTED_LOOKUP = DynamicKind.COMPUTED_LOOKUP
DYNAMIC_DOTTED_PATH = DynamicKind.DOTTED_PATH
DYNAMIC_GETATTR = DynamicKind.GETATTR
DYNAMIC_IMPORT_MODULE = DynamicKind.IMPORT_MODULE
DYNAMIC_MODULE_GETATTR = DynamicKind.MODULE_GETATTR
DYNAMIC_REGISTRY = DynamicKind.REGISTRY
DYNAMIC_STRING_LITERAL = DynamicKind.STRING_LITERAL
EDGE_CALL = EdgeKind.CALL
EDGE_CLASS_MEMBER = EdgeKind.CLASS_MEMBER
EDGE_CONTAINS = EdgeKind.CONTAINS
EDGE_FIXTURE = EdgeKind.FIXTURE
EDGE_IMPORT = EdgeKind.IMPORT
EDGE_INHERIT = EdgeKind.INHERIT
EDGE_INSTANTIATE = EdgeKind.INSTANTIATE
EDGE_OVERRIDE = EdgeKind.OVERRIDE
EDGE_REEXPORT = EdgeKind.REEXPORT
EDGE_TESTS = EdgeKind.TESTS
EDGE_TYPE_REF = EdgeKind.TYPE_REF
NODE_CLASS = NodeKind.CLASS
NODE_FIXTURE = NodeKind.FIXTURE
NODE_FUNCTION = NodeKind.FUNCTION
NODE_METHOD = NodeKind.METHOD
NODE_TEST = NodeKind.TEST
PARAM_KEYWORD_ONLY = ParamKind.KEYWORD_ONLY
PARAM_POSITIONAL_ONLY = ParamKind.POSITIONAL_ONLY
PARAM_POSITIONAL_OR_KEYWORD = ParamKind.POSITIONAL_OR_KEYWORD
PARAM_VAR_KEYWORD = ParamKind.VAR_KEYWORD
PARAM_VAR_POSITIONAL = ParamKind.VAR_POSITIONAL
