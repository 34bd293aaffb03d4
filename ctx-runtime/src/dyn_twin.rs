//! [`dyn_twin!`]: the object-safe twin of a backend trait, generated from its methods.
//!
//! A backend trait (`ChatModel`, `Retriever`, `NodeSearch`, …) is implemented with plain
//! `async fn`s: its methods return `impl Future<Output = …> + Send`, so it has no `dyn` form. Its
//! twin (`ChatModelDyn`, …) has each async method boxed (`dyn_chat` returning a
//! `Pin<Box<dyn Future + Send + 'a>>` alias) and each plain method forwarded; every
//! implementation of the trait implements the twin (a blanket impl), and the twin's trait
//! object implements the trait again, so code written against the trait takes
//! `&dyn ChatModelDyn` too. The three pieces are written out here once, for all six twins.

/// Generates `trait $Twin` (its methods documented as the trait's, boxed), `impl<T: $Trait>
/// $Twin for T`, and `impl $Trait for dyn $Twin + '_`, from the trait's method signatures.
///
/// ```ignore
/// dyn_twin! {
///     /// [`Retriever`] as a trait object …
///     #[doc(alias = "dyn Retriever")]
///     pub trait RetrieverDyn: Send + Sync {
///         impl<R: Retriever>;
///         async fn retrieve(&self, request: &ContextRetrieverRequest) -> Result<ContextPack, RetrieverError>
///             => dyn_retrieve -> RetrieveFuture<'a>;
///     }
/// }
/// ```
///
/// - `impl<R: Retriever>;` names the trait and the type parameter of the blanket impl.
/// - `fn name(&self, …) -> Out => dyn_name;` twins a plain method (forwarded as it is).
/// - `async fn name(&self, …) -> Out => dyn_name -> Future<'a, …>;` twins an async method: the
///   twin's method takes `&'a self` and every argument for `'a` and returns `Future<'a, …>`, a
///   boxed-future alias of the caller's. An argument is `&T`, `&mut T`, `Name<'_>` (one elided
///   lifetime) or an owned type without lifetimes.
macro_rules! dyn_twin {
    (
        $(#[$attr:meta])*
        $vis:vis trait $twin:ident: $bound:ident $(+ $bounds:ident)* {
            impl<$ty:ident: $trait:ident>;
            $($methods:tt)*
        }
    ) => {
        $crate::dyn_twin::dyn_twin! {
            @method $ty $trait [$(#[$attr])* $vis $twin [$bound $(+ $bounds)*]] [] [] [] $($methods)*
        }
    };

    // A plain method: forwarded as it is.
    (
        @method $ty:ident $trait:ident $head:tt [$($decl:tt)*] [$($blanket:tt)*] [$($reverse:tt)*]
        fn $name:ident(&self $(, $arg:ident: $arg_ty:ty)*) -> $out:ty => $dyn:ident;
        $($rest:tt)*
    ) => {
        $crate::dyn_twin::dyn_twin! {
            @method $ty $trait $head
            [
                $($decl)*
                #[doc = concat!("[`", stringify!($trait), "::", stringify!($name), "`].")]
                fn $dyn(&self $(, $arg: $arg_ty)*) -> $out;
            ]
            [$($blanket)* fn $dyn(&self $(, $arg: $arg_ty)*) -> $out { self.$name($($arg),*) }]
            [$($reverse)* fn $name(&self $(, $arg: $arg_ty)*) -> $out { self.$dyn($($arg),*) }]
            $($rest)*
        }
    };

    // An async method: its arguments are read one by one (`@arg`), then it is boxed.
    (
        @method $ty:ident $trait:ident $head:tt $decl:tt $blanket:tt $reverse:tt
        async fn $name:ident(&self, $($args:tt)*) -> $out:ty
            => $dyn:ident -> $fut:ident<$lt:lifetime $(, $fut_arg:ty)*>;
        $($rest:tt)*
    ) => {
        $crate::dyn_twin::dyn_twin! {
            @arg $lt [$ty $trait $head $decl $blanket $reverse [$($rest)*]]
            [$name $dyn [$out] $fut [$($fut_arg),*]] [] [] []
            $($args)*
        }
    };

    // Every method read: the twin, the blanket impl, the trait for the twin's objects.
    (@method $ty:ident $trait:ident [$(#[$attr:meta])* $vis:vis $twin:ident [$($bounds:tt)*]]
        [$($decl:tt)*] [$($blanket:tt)*] [$($reverse:tt)*]
    ) => {
        $(#[$attr])*
        $vis trait $twin: $($bounds)* {
            $($decl)*
        }

        impl<$ty: $trait> $twin for $ty {
            $($blanket)*
        }

        impl $trait for dyn $twin + '_ {
            $($reverse)*
        }
    };

    // The arguments of an async method, each kept three ways: for `'a` in the twin, as written
    // in the trait, and by name for the call.
    (@arg $lt:lifetime $ctx:tt $sig:tt [$($twin_args:tt)*] [$($args:tt)*] [$($names:ident)*]
        $arg:ident: &mut $arg_ty:ty $(, $($more:tt)*)?
    ) => {
        $crate::dyn_twin::dyn_twin! {
            @arg $lt $ctx $sig
            [$($twin_args)* $arg: &$lt mut $arg_ty,] [$($args)* $arg: &mut $arg_ty,] [$($names)* $arg]
            $($($more)*)?
        }
    };
    (@arg $lt:lifetime $ctx:tt $sig:tt [$($twin_args:tt)*] [$($args:tt)*] [$($names:ident)*]
        $arg:ident: &$arg_ty:ty $(, $($more:tt)*)?
    ) => {
        $crate::dyn_twin::dyn_twin! {
            @arg $lt $ctx $sig
            [$($twin_args)* $arg: &$lt $arg_ty,] [$($args)* $arg: &$arg_ty,] [$($names)* $arg]
            $($($more)*)?
        }
    };
    (@arg $lt:lifetime $ctx:tt $sig:tt [$($twin_args:tt)*] [$($args:tt)*] [$($names:ident)*]
        $arg:ident: $arg_ty:ident<'_> $(, $($more:tt)*)?
    ) => {
        $crate::dyn_twin::dyn_twin! {
            @arg $lt $ctx $sig
            [$($twin_args)* $arg: $arg_ty<$lt>,] [$($args)* $arg: $arg_ty<'_>,] [$($names)* $arg]
            $($($more)*)?
        }
    };
    (@arg $lt:lifetime $ctx:tt $sig:tt [$($twin_args:tt)*] [$($args:tt)*] [$($names:ident)*]
        $arg:ident: $arg_ty:ty $(, $($more:tt)*)?
    ) => {
        $crate::dyn_twin::dyn_twin! {
            @arg $lt $ctx $sig
            [$($twin_args)* $arg: $arg_ty,] [$($args)* $arg: $arg_ty,] [$($names)* $arg]
            $($($more)*)?
        }
    };
    // Every argument read: the method, boxed, and on to the next.
    (@arg $lt:lifetime
        [$ty:ident $trait:ident $head:tt [$($decl:tt)*] [$($blanket:tt)*] [$($reverse:tt)*] [$($rest:tt)*]]
        [$name:ident $dyn:ident [$out:ty] $fut:ident [$($fut_arg:ty),*]]
        [$($twin_args:tt)*] [$($args:tt)*] [$($names:ident)*]
    ) => {
        $crate::dyn_twin::dyn_twin! {
            @method $ty $trait $head
            [
                $($decl)*
                #[doc = concat!("[`", stringify!($trait), "::", stringify!($name), "`], boxed.")]
                fn $dyn<$lt>(&$lt self, $($twin_args)*) -> $fut<$lt $(, $fut_arg)*>;
            ]
            [
                $($blanket)*
                fn $dyn<$lt>(&$lt self, $($twin_args)*) -> $fut<$lt $(, $fut_arg)*> {
                    ::std::boxed::Box::pin(self.$name($($names),*))
                }
            ]
            [
                $($reverse)*
                async fn $name(&self, $($args)*) -> $out {
                    self.$dyn($($names),*).await
                }
            ]
            $($rest)*
        }
    };
}

pub(crate) use dyn_twin;
