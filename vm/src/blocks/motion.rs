//! Motion (scratch-vm `scratch3_motion.js`).

use super::{Eval, input};
use crate::project::BlockIdx;
use crate::runtime::Vm;
use crate::value::Value;

/// scratch-vm `MathUtil.wrapClamp`.
pub(crate) fn wrap_clamp(n: f64, min: f64, max: f64) -> f64 {
    let range = max - min + 1.0;
    n - ((n - min) / range).floor() * range
}

/// scratch-vm `limitPrecision`: snaps values within 1e-9 of an integer.
fn limit_precision(c: f64) -> f64 {
    let r = c.round();
    if (c - r).abs() < 1e-9 { r } else { c }
}

impl Vm {
    pub(crate) fn set_xy(&mut self, target: u32, x: f64, y: f64) {
        if let Some(t) = self.targets.get_mut(target as usize)
            && !t.is_stage
        {
            t.x = x;
            t.y = y;
        }
    }

    pub(crate) fn set_direction(&mut self, target: u32, d: f64) {
        if let Some(t) = self.targets.get_mut(target as usize)
            && !t.is_stage
            && d.is_finite()
        {
            t.direction = wrap_clamp(d, -179.0, 180.0);
        }
    }
}

pub(super) fn execute(vm: &mut Vm, ti: usize, block: BlockIdx, op: &str) -> bool {
    let target = vm.threads[ti].target;
    let Some(t) = vm.target(target) else { return matches!(op, "motion_movesteps") };
    let (x, y, dir) = (t.x, t.y, t.direction);
    match op {
        "motion_movesteps" => {
            let steps = input(vm, ti, block, "STEPS").to_number();
            let rad = (90.0 - dir).to_radians();
            vm.set_xy(target, x + steps * rad.cos(), y + steps * rad.sin());
        }
        "motion_gotoxy" => {
            let nx = input(vm, ti, block, "X").to_number();
            let ny = input(vm, ti, block, "Y").to_number();
            vm.set_xy(target, nx, ny);
        }
        "motion_changexby" => {
            let d = input(vm, ti, block, "DX").to_number();
            vm.set_xy(target, x + d, y);
        }
        "motion_changeyby" => {
            let d = input(vm, ti, block, "DY").to_number();
            vm.set_xy(target, x, y + d);
        }
        "motion_setx" => {
            let v = input(vm, ti, block, "X").to_number();
            vm.set_xy(target, v, y);
        }
        "motion_sety" => {
            let v = input(vm, ti, block, "Y").to_number();
            vm.set_xy(target, x, v);
        }
        "motion_turnright" => {
            let d = input(vm, ti, block, "DEGREES").to_number();
            vm.set_direction(target, dir + d);
        }
        "motion_turnleft" => {
            let d = input(vm, ti, block, "DEGREES").to_number();
            vm.set_direction(target, dir - d);
        }
        "motion_pointindirection" => {
            let d = input(vm, ti, block, "DIRECTION").to_number();
            vm.set_direction(target, d);
        }
        _ => return false,
    }
    true
}

pub(super) fn evaluate(ev: &mut Eval<'_>, op: &str) -> Option<Value> {
    let t = ev.vm.target(ev.target())?;
    let v = match op {
        "motion_xposition" => Value::Num(limit_precision(t.x)),
        "motion_yposition" => Value::Num(limit_precision(t.y)),
        "motion_direction" => Value::Num(t.direction),
        _ => return None,
    };
    Some(v)
}
