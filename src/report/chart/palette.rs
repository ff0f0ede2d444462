//! The charts' colours: ink, grid lines and the error mark, and one colour per store kind
//! so that a store looks the same in every chart and every run.

use plotters::style::RGBColor;

use crate::catalog::StoreKind;
use crate::report::model::Report;
use crate::report::variants::kind_of;

/// Text, secondary text, grid lines.
pub(super) const INK: RGBColor = RGBColor(33, 33, 33);
pub(super) const MUTED: RGBColor = RGBColor(85, 85, 85);
pub(super) const GRID: RGBColor = RGBColor(222, 222, 222);

/// Marks an interval with errors.
pub(super) const ERROR_RED: RGBColor = RGBColor(0xd6, 0x00, 0x1c);

/// One colour per store kind (in [`StoreKind::all`] order), then for unknown names. Dark
/// enough for thin lines on white.
pub(super) const PALETTE: [RGBColor; 10] = [
    RGBColor(0x4e, 0x79, 0xa7),
    RGBColor(0xf2, 0x8e, 0x2b),
    RGBColor(0xe1, 0x57, 0x59),
    RGBColor(0x3f, 0x9e, 0x9a),
    RGBColor(0x59, 0xa1, 0x4f),
    RGBColor(0xc9, 0xa2, 0x27),
    RGBColor(0xb0, 0x7a, 0xa1),
    RGBColor(0xff, 0x8a, 0x98),
    RGBColor(0x9c, 0x75, 0x5f),
    RGBColor(0x7f, 0x7f, 0x7f),
];

/// The store's colour. A store kind's is fixed, so that a store looks the same in every run;
/// a run's variants (`postgres@sync`, `postgres@async`) each get one of their own: the first
/// of a kind run only as variants its kind's colour, the others the colours of the kinds
/// absent from the run, so that no two stores of a run share one while the palette lasts.
pub(super) fn store_color(report: &Report, index: usize) -> RGBColor {
    let slot = slots(report)
        .get(index)
        .copied()
        .unwrap_or(StoreKind::all().len() + index);
    PALETTE[slot % PALETTE.len()]
}

/// Each store's place in [`PALETTE`], in the run's order (see [`store_color`]).
fn slots(report: &Report) -> Vec<usize> {
    let kinds = StoreKind::all();
    let slot_of = |name: &str| kinds.iter().position(|k| k.name() == name);
    let mut taken: Vec<usize> = report
        .stores
        .iter()
        .filter_map(|s| slot_of(&s.store))
        .collect();
    let mut slots = Vec::with_capacity(report.stores.len());
    for (i, s) in report.stores.iter().enumerate() {
        let slot = slot_of(&s.store).unwrap_or_else(|| {
            let own = slot_of(kind_of(&s.store)).filter(|k| !taken.contains(k));
            let spare = (kinds.len()..PALETTE.len())
                .chain(0..kinds.len())
                .find(|k| !taken.contains(k));
            let chosen = own.or(spare).unwrap_or(kinds.len() + i);
            taken.push(chosen);
            chosen
        });
        slots.push(slot);
    }
    slots
}

/// `color` mixed with white (`amount` 0: unchanged, 1: white).
pub(super) fn tint(color: RGBColor, amount: f64) -> RGBColor {
    let mix =
        |c: u8| (f64::from(c) + (255.0 - f64::from(c)) * amount.clamp(0.0, 1.0)).round() as u8;
    RGBColor(mix(color.0), mix(color.1), mix(color.2))
}
