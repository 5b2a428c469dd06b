; Shared by javascript.scm and typescript.scm (included, not a language of its own).
; Top-level `const f = () => ...` / `function () {}` values count as functions, other
; top-level declarators as variables. CommonJS `exports.x = ...` is not matched.
(function_declaration name: (identifier) @name body: (statement_block) @body) @def.function
(generator_function_declaration name: (identifier) @name body: (statement_block) @body) @def.function
(method_definition name: (_) @name body: (statement_block) @body) @def.method
(program (lexical_declaration (variable_declarator name: (identifier) @name value: [(arrow_function body: (_) @body) (function_expression body: (_) @body)]) @def.function))
(program (export_statement (lexical_declaration (variable_declarator name: (identifier) @name value: [(arrow_function body: (_) @body) (function_expression body: (_) @body)]) @def.function)))
(program (variable_declaration (variable_declarator name: (identifier) @name value: [(arrow_function body: (_) @body) (function_expression body: (_) @body)]) @def.function))
(program (lexical_declaration (variable_declarator name: (identifier) @name) @def.variable))
(program (export_statement (lexical_declaration (variable_declarator name: (identifier) @name) @def.variable)))
(program (variable_declaration (variable_declarator name: (identifier) @name) @def.variable))
