; Shared by c.scm and cpp.scm (included, not a language of its own).
; Function names sit under nested declarators; parenthesised names are cleaned in code.
(function_definition declarator: [
    (function_declarator declarator: (_) @name)
    (pointer_declarator declarator: (function_declarator declarator: (_) @name))
    (pointer_declarator declarator: (pointer_declarator declarator: (function_declarator declarator: (_) @name)))
  ] body: (compound_statement) @body) @def.function
(translation_unit (declaration declarator: [(function_declarator declarator: (identifier) @name)
    (pointer_declarator declarator: (function_declarator declarator: (identifier) @name))]) @def.prototype)
(struct_specifier name: (_) @name body: (field_declaration_list) @body) @def.struct
(union_specifier name: (_) @name body: (field_declaration_list) @body) @def.union
(enum_specifier name: (_) @name body: (enumerator_list) @body) @def.enum
(type_definition declarator: (type_identifier) @name) @def.typedef
(preproc_def name: (identifier) @name) @def.macro
(preproc_function_def name: (identifier) @name) @def.macro
(field_declaration declarator: [(field_identifier) @name (pointer_declarator declarator: (field_identifier) @name) (array_declarator declarator: (field_identifier) @name)]) @def.field
(translation_unit (declaration declarator: [(identifier) @name (init_declarator declarator: (identifier) @name)]) @def.variable)
