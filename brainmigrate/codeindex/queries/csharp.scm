; C# declarations.
(class_declaration name: (identifier) @name body: (declaration_list)? @body) @def.class
(interface_declaration name: (identifier) @name body: (declaration_list)? @body) @def.interface
(struct_declaration name: (identifier) @name body: (declaration_list)? @body) @def.struct
(record_declaration name: (identifier) @name body: (declaration_list)? @body) @def.record
(enum_declaration name: (identifier) @name body: (enum_member_declaration_list) @body) @def.enum
(delegate_declaration name: (identifier) @name) @def.delegate
(method_declaration name: (identifier) @name body: [(block) (arrow_expression_clause)]? @body) @def.method
(constructor_declaration name: (identifier) @name body: [(block) (arrow_expression_clause)]? @body) @def.constructor
(destructor_declaration name: (identifier) @name body: [(block) (arrow_expression_clause)]? @body) @def.destructor
(property_declaration name: (identifier) @name) @def.property
(field_declaration (variable_declaration (variable_declarator name: (identifier) @name))) @def.field
(event_field_declaration (variable_declaration (variable_declarator name: (identifier) @name))) @def.event
(enum_member_declaration name: (identifier) @name) @def.enum_member
(namespace_declaration name: (_) @name body: (declaration_list) @body) @def.namespace
(file_scoped_namespace_declaration name: (_) @name) @def.namespace
