"""Analyses shared by passes (a pass never imports another pass):

- `var_uses`: defs / uses / free vars of statements and expressions, statement walking.
- `var_rewrite`: `VarRewriter`, `substitute`, `clone_fresh` (variable substitution and
  fresh-binding cloning of statements).
- `dataflow`: upward-exposed reads and must-definitions of structured statements (what
  ConvertToSSA needs to find loop-carried and branch-merged names).
- `const_eval`: constant evaluation of scalar expressions.
- `retype`: re-deducing an op call's type from its operands.
- `memory_effects`, `outliner`: what calls read / write, and region outlining.
"""
