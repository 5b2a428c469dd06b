; Swift declarations. struct / enum / extension / actor are class_declaration with a
; declaration_kind field (refined in code). `name:` is also used for return types, so the
; name capture is always constrained to simple_identifier / type_identifier.
(class_declaration name: (type_identifier) @name body: (_) @body) @def.class
(class_declaration name: (user_type (type_identifier) @name) body: (_) @body) @def.extension
(protocol_declaration name: (type_identifier) @name body: (protocol_body) @body) @def.protocol
(function_declaration name: (simple_identifier) @name body: (function_body) @body) @def.function
(protocol_function_declaration name: (simple_identifier) @name) @def.method
(init_declaration body: (function_body)? @body) @def.constructor
(deinit_declaration body: (function_body) @body) @def.destructor
(source_file (property_declaration name: (pattern bound_identifier: (simple_identifier) @name) computed_value: (computed_property)? @body) @def.property)
(class_body (property_declaration name: (pattern bound_identifier: (simple_identifier) @name) computed_value: (computed_property)? @body) @def.property)
(protocol_property_declaration name: (pattern bound_identifier: (simple_identifier) @name)) @def.property
(typealias_declaration name: (type_identifier) @name) @def.typealias
(enum_entry name: (simple_identifier) @name) @def.enum_case
