; include: _js_common
(class_declaration name: (identifier) @name body: (class_body) @body) @def.class
(field_definition property: (_) @name) @def.field
