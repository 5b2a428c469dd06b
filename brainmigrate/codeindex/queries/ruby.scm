; Ruby declarations. attr_reader/writer/accessor symbols count as attributes.
(class name: [(constant) (scope_resolution)] @name body: (body_statement)? @body) @def.class
(module name: [(constant) (scope_resolution)] @name body: (body_statement)? @body) @def.module
(method name: (_) @name body: (_)? @body) @def.method
(singleton_method name: (_) @name body: (_)? @body) @def.method
(assignment left: (constant) @name) @def.constant
(call method: (identifier) @_m arguments: (argument_list (simple_symbol) @name) (#match? @_m "^attr_(reader|writer|accessor)$")) @def.attribute
