; Scala declarations. A function's body is the expression after `=` (the signature keeps `=`).
(class_definition name: (identifier) @name body: (template_body)? @body) @def.class
(object_definition name: (identifier) @name body: (template_body)? @body) @def.object
(trait_definition name: (identifier) @name body: (template_body)? @body) @def.trait
(enum_definition name: (identifier) @name body: (enum_body) @body) @def.enum
(simple_enum_case name: (identifier) @name) @def.enum_case
(function_definition name: (identifier) @name body: (_) @body) @def.function
(function_declaration name: (identifier) @name) @def.function
(template_body (val_definition pattern: (identifier) @name) @def.val)
(compilation_unit (val_definition pattern: (identifier) @name) @def.val)
(template_body (var_definition pattern: (identifier) @name) @def.var)
(val_declaration name: (identifier) @name) @def.val
(type_definition name: (type_identifier) @name) @def.typealias
(given_definition name: (identifier) @name) @def.given
