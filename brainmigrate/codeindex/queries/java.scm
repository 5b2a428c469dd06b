; Java declarations. Modifiers and annotations are inside the declaration node.
(class_declaration name: (identifier) @name body: (class_body) @body) @def.class
(interface_declaration name: (identifier) @name body: (interface_body) @body) @def.interface
(enum_declaration name: (identifier) @name body: (enum_body) @body) @def.enum
(record_declaration name: (identifier) @name body: (class_body) @body) @def.record
(annotation_type_declaration name: (identifier) @name body: (annotation_type_body) @body) @def.annotation
(method_declaration name: (identifier) @name body: (block)? @body) @def.method
(constructor_declaration name: (identifier) @name body: (constructor_body) @body) @def.constructor
(compact_constructor_declaration name: (identifier) @name body: (block) @body) @def.constructor
(field_declaration declarator: (variable_declarator name: (identifier) @name)) @def.field
(constant_declaration declarator: (variable_declarator name: (identifier) @name)) @def.constant
(enum_constant name: (identifier) @name) @def.enum_constant
