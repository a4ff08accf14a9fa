//! The form's controls, shared by its sections: a number field, a switch, a picker of a wire enum,
//! and the slot that shows a knob only where the framework and method take it.

use std::sync::Arc;

use leptos::prelude::*;
use trainplan_core::knobs::{self, Applies, Knob};
use trainplan_core::plan::PlanFile;

use super::FormCtx;
use crate::components::{TextField, use_lang, use_tr, wrappable};
use crate::form::{FormField, NumField, NumKind};
use crate::i18n::{Key, Lang, fill, t};
use crate::messages::method_key;

/// A labelled number field bound to one of the form's numbers; its message says what it takes.
pub fn number(
    ctx: FormCtx,
    label: Key,
    testid: &'static str,
    field: NumField,
    placeholder: Option<Signal<String>>,
) -> impl IntoView {
    number_labelled(ctx, move || label, testid, field, placeholder)
}

/// [`number`] whose label follows the form (a setting each framework names its own way).
pub fn number_labelled(
    ctx: FormCtx,
    label: impl Fn() -> Key + Copy + Send + Sync + 'static,
    testid: &'static str,
    field: NumField,
    placeholder: Option<Signal<String>>,
) -> impl IntoView {
    let tr = use_tr();
    let form = ctx.form;
    let message = match field.kind() {
        NumKind::Count => Key::plan_form_bad_count,
        NumKind::Auto => Key::plan_form_bad_whole,
        NumKind::Fraction => Key::plan_form_bad_fraction,
        NumKind::Factor => Key::plan_form_bad_factor,
        NumKind::Rate => Key::plan_form_bad_rate,
    };
    view! {
        <TextField
            label=Signal::derive(move || tr(label()).to_owned())
            testid=testid
            // A memo: every keystroke changes the form, but only this field's own edits its text.
            value=Memo::new(move |_| form.with(|f| f.number(field).to_owned()))
            invalid=Signal::derive(move || ctx.is_bad(FormField::Number(field)))
            message=Signal::derive(move || tr(message).to_owned())
            on_input=move |text| form.update(|f| f.set_number(field, text))
            numeric=true
            placeholder=placeholder.unwrap_or_default()
        />
    }
}

/// A placeholder in the user's language, for a number field left empty.
pub fn placeholder(key: Key) -> Option<Signal<String>> {
    let tr = use_tr();
    Some(Signal::derive(move || tr(key).to_owned()))
}

/// Reads a switch's boolean from the plan file.
pub type ReadBool = fn(&PlanFile) -> bool;

/// Writes a switch's boolean into the plan file.
pub type WriteBool = fn(&mut PlanFile, bool);

/// A labelled switch bound to a boolean of the plan file.
pub fn check(ctx: FormCtx, label: Key, testid: &'static str, get: ReadBool, set: WriteBool) -> impl IntoView {
    let tr = use_tr();
    let form = ctx.form;
    // Memoised: the box is set again only when its own value changes, not on every keystroke.
    let checked = Memo::new(move |_| form.with(|f| get(&f.file)));
    view! {
        <label class="check">
            <input
                type="checkbox"
                data-testid=testid
                prop:checked=checked
                on:change=move |ev| {
                    let on = event_target_checked(&ev);
                    form.update(|f| set(&mut f.file, on));
                }
            />
            <span>{move || wrappable(tr(label))}</span>
        </label>
    }
}

/// A labelled picker bound to one wire enum of the plan file: each value written as `shown` says
/// in the user's language, chosen through `set`.
pub fn enum_select<T: Copy + PartialEq + Send + Sync + 'static>(
    ctx: FormCtx,
    label_testid: (Key, &'static str),
    all: &'static [T],
    wire: fn(T) -> &'static str,
    shown: fn(T, Lang) -> &'static str,
    get: fn(&PlanFile) -> T,
    set: fn(&mut PlanFile, T),
) -> impl IntoView {
    enum_select_among(ctx, label_testid, (all, None), wire, shown, get, set)
}

/// The values a picker offers for the plan file (the core's, as `choices::fsdp_offered` gives them).
pub type Offered<T> = fn(&PlanFile) -> &'static [T];

/// [`enum_select`] over `all`, offering only the values `offered` gives for the plan file where it is
/// given: the others stay in the list, hidden, so a value a plan file sets is still shown as chosen.
pub fn enum_select_among<T: Copy + PartialEq + Send + Sync + 'static>(
    ctx: FormCtx,
    (label, testid): (Key, &'static str),
    (all, offered): (&'static [T], Option<Offered<T>>),
    wire: fn(T) -> &'static str,
    shown: fn(T, Lang) -> &'static str,
    get: fn(&PlanFile) -> T,
    set: fn(&mut PlanFile, T),
) -> impl IntoView {
    let tr = use_tr();
    let lang = use_lang();
    let form = ctx.form;
    // The chosen value, memoised: each option's `selected` follows it, not every keystroke's form.
    let chosen = Memo::new(move |_| form.with(|f| get(&f.file)));
    let offered = offered.map(|of| Memo::new(move |_| form.with(|f| of(&f.file))));
    view! {
        <label class="field">
            <span>{move || wrappable(tr(label))}</span>
            <select data-testid=testid on:change=move |ev| {
                let value = event_target_value(&ev);
                if let Some(&k) = all.iter().find(|&&k| wire(k) == value) {
                    form.update(|f| set(&mut f.file, k));
                }
            }>
                {all.iter().map(|&k| view! {
                    <option
                        value=wire(k)
                        selected=move || chosen.get() == k
                        hidden=move || offered.is_some_and(|o| !o.get().contains(&k))
                    >
                        {move || shown(k, lang.get())}
                    </option>
                }).collect_view()}
            </select>
        </label>
    }
}

/// A knob of the form, shown when the plan's framework and method take it (`knobs::applies`); with
/// the show-all switch on, the others too, disabled, each saying who takes it.
pub fn knob_slot<V, F>(ctx: FormCtx, knob: Knob, control: F) -> AnyView
where
    V: IntoView + 'static,
    F: Fn() -> V + Send + Sync + 'static,
{
    // The control's view type erased here, so what follows is built once for every knob (one
    // copy in the wasm, not one per control).
    knob_slot_erased(ctx, knob, Arc::new(move || control().into_any()))
}

fn knob_slot_erased(ctx: FormCtx, knob: Knob, control: Arc<dyn Fn() -> AnyView + Send + Sync>) -> AnyView {
    let lang = use_lang();
    let (form, show_all) = (ctx.form, ctx.show_all);
    // Read through the form's shape (`FormCtx::training`), which a keystroke in a number leaves.
    let applies = move || {
        let (framework, method) = ctx.training();
        knobs::applies(framework, method, knob)
    };
    // Off where it does not apply, or where its framework reads it on another vendor's devices only.
    let taken = move || {
        let ((framework, method), vendor) = (ctx.training(), ctx.vendor());
        knobs::takes(framework, method, knob, vendor)
    };
    let why = move || {
        let lang = lang.get();
        match applies() {
            Applies::Yes => t(lang, Key::knobs_not_vendor).to_owned(),
            not => form.with(|f| why_not(lang, f.file.framework.name(), tr_method(lang, f), not)),
        }
    };
    view! {
        <Show when=move || show_all.get() || taken()>
            <fieldset class="knob" disabled=move || !taken() data-knob=knob.path()>
                {control()}
                <Show when=move || !taken()>
                    <p class="knob-why" data-testid=format!("knob-why-{}", knob.path())>{why}</p>
                </Show>
            </fieldset>
        </Show>
    }
    .into_any()
}

/// The plan's method in `lang`.
fn tr_method(lang: Lang, f: &crate::form::PlanForm) -> &'static str {
    t(lang, method_key(f.file.method))
}

/// Why a knob is disabled: who takes it, in `lang` (empty when it applies).
fn why_not(lang: Lang, framework: &str, method: &str, applies: Applies) -> String {
    let sep = match lang {
        Lang::En => ", ",
        Lang::Zh => "、",
    };
    match applies {
        Applies::Yes => String::new(),
        Applies::Frameworks(list) => {
            let names: Vec<_> = list.iter().map(|fw| fw.name()).collect();
            fill(
                t(lang, Key::knobs_not_framework),
                &[("framework", framework), ("frameworks", &names.join(sep))],
            )
        }
        Applies::Methods(list) => {
            let names: Vec<_> = list.iter().map(|&m| t(lang, method_key(m))).collect();
            fill(t(lang, Key::knobs_not_method), &[("method", method), ("methods", &names.join(sep))])
        }
    }
}
