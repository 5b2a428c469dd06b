; include: _js_common
; Used for both the typescript and the tsx grammars.
(class_declaration name: (type_identifier) @name body: (class_body) @body) @def.class
(abstract_class_declaration name: (type_identifier) @name body: (class_body) @body) @def.class
(interface_declaration name: (type_identifier) @name body: (interface_body) @body) @def.interface
(type_alias_declaration name: (type_identifier) @name) @def.typealias
(enum_declaration name: (identifier) @name body: (enum_body) @body) @def.enum
(function_signature name: (identifier) @name) @def.function
(method_signature name: (_) @name) @def.method
(abstract_method_signature name: (_) @name) @def.method
(public_field_definition name: (_) @name) @def.field
(property_signature name: (_) @name) @def.field
(internal_module name: (_) @name body: (statement_block) @body) @def.namespace
(module name: (_) @name body: (statement_block)? @body) @def.module
