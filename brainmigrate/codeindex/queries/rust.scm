; Rust declarations. `#[attr]` items are siblings, so they are not part of the signature.
; impl blocks are containers named after their type (generics and paths stripped).
(function_item name: (identifier) @name body: (block) @body) @def.function
(function_signature_item name: (identifier) @name) @def.function
(struct_item name: (type_identifier) @name body: (_)? @body) @def.struct
(enum_item name: (type_identifier) @name body: (enum_variant_list) @body) @def.enum
(union_item name: (type_identifier) @name body: (field_declaration_list) @body) @def.union
(trait_item name: (type_identifier) @name body: (declaration_list) @body) @def.trait
(impl_item type: [(type_identifier) @name (generic_type type: (type_identifier) @name)
                  (scoped_type_identifier name: (type_identifier) @name)] body: (declaration_list)? @body) @def.impl
(mod_item name: (identifier) @name body: (declaration_list)? @body) @def.module
(type_item name: (type_identifier) @name) @def.typealias
(const_item name: (identifier) @name) @def.constant
(static_item name: (identifier) @name) @def.static
(macro_definition name: (identifier) @name) @def.macro
(field_declaration name: (field_identifier) @name) @def.field
(enum_variant name: (identifier) @name) @def.variant
