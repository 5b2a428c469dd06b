; include: _c_common
(function_definition declarator: (reference_declarator (function_declarator declarator: (_) @name)) body: (compound_statement) @body) @def.function
(function_definition declarator: (function_declarator declarator: (_) @name) body: [(field_initializer_list) (default_method_clause) (delete_method_clause)] @body) @def.function
(class_specifier name: (_) @name body: (field_declaration_list) @body) @def.class
(namespace_definition name: (_) @name body: (declaration_list) @body) @def.namespace
(field_declaration declarator: (function_declarator declarator: (_) @name)) @def.method
(declaration declarator: (function_declarator declarator: [(identifier) (qualified_identifier)] @name)) @def.prototype
(alias_declaration name: (type_identifier) @name) @def.typealias
