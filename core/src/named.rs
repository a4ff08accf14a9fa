//! Enums whose every variant has a stable name, the text plan files, the report and the page use:
//! [`Field`](crate::field::Field) by dotted path, [`Move`](crate::advice::Move) by code. One macro
//! writes the list of every variant, the name, the reverse lookup, `Display` and serde's string.

/// `named_enum! { /// doc  pub enum Name (ALL doc) { Variant = "name", … } }`: the enum with a doc
/// line per variant (its name), `ALL`, `name()`, `from_name()`, `Display` and `Serialize` as the
/// name.
macro_rules! named_enum {
    (
        $(#[doc = $doc:literal])*
        pub enum $name:ident ($all_doc:literal) {
            $($variant:ident = $text:literal,)*
        }
    ) => {
        $(#[doc = $doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum $name {
            $(
                #[doc = concat!("`", $text, "`.")]
                $variant,
            )*
        }

        impl $name {
            #[doc = $all_doc]
            pub const ALL: &'static [$name] = &[$($name::$variant,)*];

            /// The stable name plan files, the report and the page write.
            pub const fn name(self) -> &'static str {
                match self {
                    $($name::$variant => $text,)*
                }
            }

            /// The variant of a name; `None` for any other text.
            pub fn from_name(text: &str) -> Option<$name> {
                match text {
                    $($text => Some($name::$variant),)*
                    _ => None,
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }

        /// Written as its name.
        impl serde::Serialize for $name {
            fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
                serializer.serialize_str(self.name())
            }
        }
    };
}
