; Kotlin declarations. The grammar has no field names: children are matched by position.
; Interface / enum are class_declaration plus a keyword child (refined in code).
(class_declaration (type_identifier) @name [(class_body) (enum_class_body)]? @body) @def.class
(object_declaration (type_identifier) @name (class_body)? @body) @def.object
(companion_object (type_identifier)? @name (class_body)? @body) @def.companion
(function_declaration (simple_identifier) @name (function_body)? @body) @def.function
(secondary_constructor (statements)? @body) @def.constructor
(source_file (property_declaration (variable_declaration (simple_identifier) @name)) @def.property)
(class_body (property_declaration (variable_declaration (simple_identifier) @name)) @def.property)
(class_parameter (binding_pattern_kind) (simple_identifier) @name) @def.property
(type_alias (type_identifier) @name) @def.typealias
(enum_entry (simple_identifier) @name) @def.enum_entry
