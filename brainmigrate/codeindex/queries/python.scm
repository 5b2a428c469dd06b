; Python declarations.
; `assignment` sits directly under `module` / `block` (no expression_statement wrapper).
(class_definition name: (identifier) @name body: (block) @body) @def.class
(function_definition name: (identifier) @name body: (block) @body) @def.function
(module (assignment left: (identifier) @name) @def.variable)
(class_definition body: (block (assignment left: (identifier) @name) @def.field))
