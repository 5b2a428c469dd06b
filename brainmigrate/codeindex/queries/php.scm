; PHP declarations.
(class_declaration name: (name) @name body: (declaration_list) @body) @def.class
(interface_declaration name: (name) @name body: (declaration_list) @body) @def.interface
(trait_declaration name: (name) @name body: (declaration_list) @body) @def.trait
(enum_declaration name: (name) @name body: (enum_declaration_list) @body) @def.enum
(function_definition name: (name) @name body: (compound_statement) @body) @def.function
(method_declaration name: (name) @name body: (compound_statement)? @body) @def.method
(property_declaration (property_element name: (variable_name (name) @name))) @def.property
(const_declaration (const_element (name) @name)) @def.constant
(enum_case name: (name) @name) @def.enum_case
(namespace_definition name: (namespace_name) @name body: (compound_statement)? @body) @def.namespace
