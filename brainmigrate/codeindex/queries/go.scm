; Go declarations. Methods carry @receiver (their container). Several patterns can match
; one type_spec: the earliest pattern wins, so struct/interface come before the generic one.
(function_declaration name: (identifier) @name body: (block)? @body) @def.function
(method_declaration
  receiver: (parameter_list (parameter_declaration type: [(type_identifier) @receiver
      (pointer_type (type_identifier) @receiver) (generic_type type: (type_identifier) @receiver)
      (pointer_type (generic_type type: (type_identifier) @receiver))]))
  name: (field_identifier) @name body: (block)? @body) @def.method
(type_spec name: (type_identifier) @name type: (struct_type) @body) @def.struct
(type_spec name: (type_identifier) @name type: (interface_type) @body) @def.interface
(type_spec name: (type_identifier) @name) @def.type
(type_alias name: (type_identifier) @name) @def.typealias
(source_file (const_declaration (const_spec name: (identifier) @name) @def.constant))
(source_file (var_declaration (var_spec name: (identifier) @name) @def.variable))
(source_file (var_declaration (var_spec_list (var_spec name: (identifier) @name) @def.variable)))
(field_declaration name: (field_identifier) @name) @def.field
(method_elem name: (field_identifier) @name) @def.method
