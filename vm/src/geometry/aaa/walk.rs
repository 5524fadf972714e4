//! Skia's two edge walkers (`aaa_walk_convex_edges`, `aaa_walk_edges`): down the sorted
//! edge list strip by strip, each strip's trapezoids blitted row by row.

use super::blit::Blitter;
use super::edge::{Curve, Edge};
use super::fixed::{self as fx, Fixed, MAX, ONE};
use super::rows::{fixed_to_alpha, partial_alpha_h, trapezoid_row};

/// The list's sentinels in the arena.
pub const HEAD: usize = 0;
pub const TAIL: usize = 1;

fn is_smooth_enough_one(this: &Edge, next: &Edge) -> bool {
    match this.curve {
        Curve::Cubic(k) if this.curve_count < 0 => {
            let dd = this.curve_shift;
            (k.cdx.wrapping_abs() >> 1) >= (k.cddx.wrapping_abs() >> dd)
                && (k.cdy.wrapping_abs() >> 1) >= (k.cddy.wrapping_abs() >> dd)
                && (k.cdy.wrapping_sub(k.cddy >> dd) >> k.dshift) >= ONE
        }
        Curve::Quad(q) if this.curve_count > 0 => {
            (q.qdx.wrapping_abs() >> 1) >= q.qddx.wrapping_abs()
                && (q.qdy.wrapping_abs() >> 1) >= q.qddy.wrapping_abs()
                && (q.qdy.wrapping_sub(q.qddy) >> this.curve_shift) >= ONE
        }
        _ => fx::sat_sub(next.dx, this.dx).wrapping_abs() <= ONE && next.lower_y.wrapping_sub(next.upper_y) >= ONE,
    }
}

fn is_smooth_enough(e: &[Edge], left: usize, rite: usize, curr: usize, stop_y: i32) -> bool {
    if e[curr].upper_y >= stop_y.wrapping_shl(16) {
        return false;
    }
    if e[left].lower_y.wrapping_add(ONE) < e[rite].lower_y {
        return is_smooth_enough_one(&e[left], &e[curr]);
    } else if e[left].lower_y > e[rite].lower_y.wrapping_add(ONE) {
        return is_smooth_enough_one(&e[rite], &e[curr]);
    }
    let mut curr = curr;
    let mut next_curr = e[curr].next;
    if e[next_curr].upper_y >= stop_y << 16 {
        return false;
    }
    if e[next_curr].upper_x < e[curr].upper_x {
        std::mem::swap(&mut curr, &mut next_curr);
    }
    is_smooth_enough_one(&e[left], &e[curr]) && is_smooth_enough_one(&e[rite], &e[next_curr])
}

/// `aaa_walk_convex_edges`: a convex shape has one left and one right edge in every row.
pub fn walk_convex(e: &mut [Edge], b: &mut Blitter, stop_y: i32, left_bound: Fixed, rite_bound: Fixed) {
    let mut left = e[HEAD].next;
    let mut rite = e[left].next;
    let mut curr = e[rite].next;
    let mut y = e[left].upper_y.max(e[rite].upper_y);
    // Bounded: each pass moves y down or retires an edge.
    for _ in 0..(1 << 24) {
        while e[left].lower_y <= y {
            if !e[left].update() {
                if fx::floor_to_int(e[curr].upper_y) >= stop_y {
                    return;
                }
                left = curr;
                curr = e[curr].next;
            }
        }
        while e[rite].lower_y <= y {
            if !e[rite].update() {
                if fx::floor_to_int(e[curr].upper_y) >= stop_y {
                    return;
                }
                rite = curr;
                curr = e[curr].next;
            }
        }
        if fx::floor_to_int(y) >= stop_y {
            return;
        }
        e[left].go_y(y);
        e[rite].go_y(y);
        if e[left].x > e[rite].x || (e[left].x == e[rite].x && e[left].dx > e[rite].dx) {
            std::mem::swap(&mut left, &mut rite);
        }
        let mut local_bot = e[left].lower_y.min(e[rite].lower_y);
        if is_smooth_enough(e, left, rite, curr, stop_y) {
            local_bot = fx::ceil_to_fixed(local_bot);
        }
        local_bot = local_bot.min(fx::from_int(stop_y));
        let mut l = left_bound.max(e[left].x);
        let d_left = e[left].dx;
        let mut r = rite_bound.min(e[rite].x);
        let d_rite = e[rite].dx;
        if (d_left | d_rite) == 0 {
            walk_convex_rect(b, l, r, y, local_bot);
            y = local_bot;
        } else {
            const SNAP_DIGIT: Fixed = ONE >> 4;
            const SNAP_HALF: Fixed = SNAP_DIGIT >> 1;
            const SNAP_MASK: Fixed = -1 ^ (SNAP_DIGIT - 1);
            l = l.wrapping_add(SNAP_HALF);
            r = r.wrapping_add(SNAP_HALF);
            let mut count = fx::ceil_to_int(local_bot) - fx::floor_to_int(y);
            let (l_dy, r_dy) = (e[left].dy, e[rite].dy);
            // One row from (l, r) at y down to (nl, nr), x snapped to 1/16 px.
            let row = |b: &mut Blitter, y: Fixed, l: Fixed, r: Fixed, nl: Fixed, nr: Fixed, full: u8| {
                let m = SNAP_MASK;
                trapezoid_row(b, y >> 16, l & m, r & m, nl & m, nr & m, l_dy, r_dy, full, false);
            };
            if count > 1 {
                if (y as u32 & 0xFFFF_0000) as i32 != y {
                    count -= 1;
                    let next_y = fx::ceil_to_fixed(y + 1);
                    let dy = next_y - y;
                    let nl = l.wrapping_add(fx::mul(d_left, dy));
                    let nr = r.wrapping_add(fx::mul(d_rite, dy));
                    row(b, y, l, r, nl, nr, partial_alpha_h(0xFF, dy));
                    b.flush_if_y_changed(y, next_y);
                    l = nl;
                    r = nr;
                    y = next_y;
                }
                while count > 1 {
                    count -= 1;
                    let next_y = y + ONE;
                    let nl = l.wrapping_add(d_left);
                    let nr = r.wrapping_add(d_rite);
                    row(b, y, l, r, nl, nr, 0xFF);
                    b.flush_if_y_changed(y, next_y);
                    l = nl;
                    r = nr;
                    y = next_y;
                }
            }
            let dy = local_bot - y;
            let nl = l.wrapping_add(fx::mul(d_left, dy)).max(left_bound + SNAP_HALF);
            let nr = r.wrapping_add(fx::mul(d_rite, dy)).min(rite_bound + SNAP_HALF);
            row(b, y, l, r, nl, nr, partial_alpha_h(0xFF, dy));
            b.flush_if_y_changed(y, local_bot);
            l = nl - SNAP_HALF;
            r = nr - SNAP_HALF;
            y = local_bot;
        }
        e[left].x = l;
        e[rite].x = r;
        e[left].y = y;
        e[rite].y = y;
    }
}

/// The convex walker's axis-aligned strip between two vertical edges.
fn walk_convex_rect(b: &mut Blitter, left: Fixed, rite: Fixed, y: Fixed, local_bot: Fixed) {
    let full_left = fx::ceil_to_int(left);
    let full_rite = fx::floor_to_int(rite);
    let partial_left = fx::from_int(full_left) - left;
    let partial_rite = rite - fx::from_int(full_rite);
    let full_top = fx::ceil_to_int(y);
    let full_bot = fx::floor_to_int(local_bot);
    let mut partial_top = fx::from_int(full_top) - y;
    let mut partial_bot = local_bot - fx::from_int(full_bot);
    if full_top > full_bot {
        partial_top -= ONE - partial_bot;
        partial_bot = 0;
    }
    if full_rite >= full_left {
        if partial_top > 0 {
            if partial_left > 0 {
                b.anti_h1(full_left - 1, full_top - 1, fixed_to_alpha(fx::mul(partial_top, partial_left)));
            }
            b.anti_hw(full_left, full_top - 1, full_rite - full_left, fixed_to_alpha(partial_top));
            if partial_rite > 0 {
                b.anti_h1(full_rite, full_top - 1, fixed_to_alpha(fx::mul(partial_top, partial_rite)));
            }
            b.flush_if_y_changed(y, y + partial_top);
        }
        if full_bot > full_top
            && (full_rite > full_left || fixed_to_alpha(partial_left) > 0 || fixed_to_alpha(partial_rite) > 0)
        {
            b.real_anti_rect(
                full_left - 1,
                full_top,
                full_rite - full_left,
                full_bot - full_top,
                fixed_to_alpha(partial_left),
                fixed_to_alpha(partial_rite),
            );
        }
        if partial_bot > 0 {
            if partial_left > 0 {
                b.anti_h1(full_left - 1, full_bot, fixed_to_alpha(fx::mul(partial_bot, partial_left)));
            }
            b.anti_hw(full_left, full_bot, full_rite - full_left, fixed_to_alpha(partial_bot));
            if partial_rite > 0 {
                b.anti_h1(full_rite, full_bot, fixed_to_alpha(fx::mul(partial_bot, partial_rite)));
            }
        }
    } else {
        let width = rite - left;
        if width > 0 {
            if partial_top > 0 {
                b.anti_hw(full_left - 1, full_top - 1, 1, fixed_to_alpha(fx::mul(partial_top, width)));
                b.flush_if_y_changed(y, y + partial_top);
            }
            if full_bot > full_top {
                b.real_v(full_left - 1, full_top, full_bot - full_top, fixed_to_alpha(width));
            }
            if partial_bot > 0 {
                b.anti_hw(full_left - 1, full_bot, 1, fixed_to_alpha(fx::mul(partial_bot, width)));
            }
        }
    }
}

fn update_next_next_y(y: Fixed, next_y: Fixed, nn: &mut Fixed) {
    if y > next_y && y < *nn {
        *nn = y;
    }
}

fn check_intersection(e: &[Edge], i: usize, next_y: Fixed, nn: &mut Fixed) {
    let p = e[i].prev;
    if p != HEAD && e[p].x.wrapping_add(e[p].dx) > e[i].x.wrapping_add(e[i].dx) {
        *nn = next_y + (ONE >> 2);
    }
}

fn check_intersection_fwd(e: &[Edge], i: usize, next_y: Fixed, nn: &mut Fixed) {
    let n = e[i].next;
    if n != TAIL && e[i].x.wrapping_add(e[i].dx) > e[n].x.wrapping_add(e[n].dx) {
        *nn = next_y + (ONE >> 2);
    }
}

fn remove_edge(e: &mut [Edge], i: usize) {
    let (p, n) = (e[i].prev, e[i].next);
    e[p].next = n;
    e[n].prev = p;
}

fn insert_edge_after(e: &mut [Edge], i: usize, after: usize) {
    let n = e[after].next;
    e[i].prev = after;
    e[i].next = n;
    e[n].prev = i;
    e[after].next = i;
}

fn backward_insert_start(e: &[Edge], mut prev: usize, x: Fixed) -> usize {
    while prev != HEAD && e[prev].x > x {
        prev = e[prev].prev;
    }
    prev
}

fn backward_insert_edge_based_on_x(e: &mut [Edge], i: usize) {
    let x = e[i].x;
    let prev = backward_insert_start(e, e[i].prev, x);
    if e[prev].next != i {
        remove_edge(e, i);
        insert_edge_after(e, i, prev);
    }
}

fn insert_new_edges(e: &mut [Edge], mut new: usize, y: Fixed, nn: &mut Fixed) {
    if e[new].upper_y > y {
        update_next_next_y(e[new].upper_y, y, nn);
        return;
    }
    let prev = e[new].prev;
    if e[prev].x <= e[new].x {
        while e[new].upper_y <= y {
            check_intersection(e, new, y, nn);
            update_next_next_y(e[new].lower_y, y, nn);
            new = e[new].next;
        }
        update_next_next_y(e[new].upper_y, y, nn);
        return;
    }
    let mut start = backward_insert_start(e, prev, e[new].x);
    loop {
        let next = e[new].next;
        let mut linked = false;
        loop {
            if e[start].next == new {
                linked = true;
                break;
            }
            let after = e[start].next;
            if e[after].x >= e[new].x {
                break;
            }
            start = after;
        }
        if !linked {
            remove_edge(e, new);
            insert_edge_after(e, new, start);
        }
        check_intersection(e, new, y, nn);
        check_intersection_fwd(e, new, y, nn);
        update_next_next_y(e[new].lower_y, y, nn);
        start = new;
        new = next;
        if e[new].upper_y > y {
            break;
        }
    }
    update_next_next_y(e[new].upper_y, y, nn);
}

fn edges_too_close(e: &[Edge], prev: usize, next: usize, lower_y: Fixed) -> bool {
    // The sentinels are real edges to Skia too (only their outer links are null).
    e[next].upper_y < lower_y && e[prev].x.wrapping_add(ONE) >= e[next].x.wrapping_sub(e[next].dx.wrapping_abs())
}

fn edges_too_close_rite(prev_rite: i32, ul: Fixed, ll: Fixed) -> bool {
    prev_rite > fx::floor_to_int(ul) || prev_rite > fx::floor_to_int(ll)
}

/// `aaa_walk_edges`: any shape, non-zero or even-odd, strips between every edge event.
#[allow(clippy::too_many_arguments)]
pub fn walk_general(
    e: &mut [Edge],
    b: &mut Blitter,
    even_odd: bool,
    start_y: i32,
    stop_y: i32,
    left_clip: Fixed,
    right_clip: Fixed,
    skip_intersect: bool,
) {
    e[HEAD].x = left_clip;
    e[HEAD].upper_x = left_clip;
    e[TAIL].x = right_clip;
    e[TAIL].upper_x = right_clip;
    let mut y = e[e[HEAD].next].upper_y.max(fx::from_int(start_y));
    let mut next_next_y = MAX;
    {
        let mut i = e[HEAD].next;
        while e[i].upper_y <= y {
            e[i].go_y(y);
            update_next_next_y(e[i].lower_y, y, &mut next_next_y);
            i = e[i].next;
        }
        update_next_next_y(e[i].upper_y, y, &mut next_next_y);
    }
    let winding_mask = if even_odd { 1 } else { -1 };
    // Bounded: y advances by at least a quarter pixel per strip.
    for _ in 0..(1 << 24) {
        let mut w = 0i32;
        let mut in_interval = false;
        let mut prev_x = e[HEAD].x;
        let mut next_y = next_next_y.min(fx::ceil_to_fixed(y + 1));
        let mut curr = e[HEAD].next;
        let mut left_e = HEAD;
        let mut left = left_clip;
        let mut left_dy: Fixed = 0;
        let mut prev_rite = fx::floor_to_int(left_clip);
        next_next_y = MAX;
        let mut y_shift = 0;
        if (next_y - y) & (ONE >> 2) != 0 {
            y_shift = 2;
            next_y = y + (ONE >> 2);
        } else if (next_y - y) & (ONE >> 1) != 0 {
            y_shift = 1;
        }
        let full = fixed_to_alpha(next_y - y);
        let row = y >> 16;
        while e[curr].upper_y <= y {
            w += e[curr].winding;
            let prev_in = in_interval;
            in_interval = (w & winding_mask) != 0;
            let is_left = in_interval && !prev_in;
            let is_rite = !in_interval && prev_in;
            if is_rite {
                let mut rite = e[curr].x;
                e[curr].go_y_shift(next_y, y_shift);
                let next_left = left_clip.max(e[left_e].x);
                rite = right_clip.min(rite);
                let next_rite = right_clip.min(e[curr].x);
                let no_real = full == 0xFF
                    && (edges_too_close_rite(prev_rite, left, e[left_e].x)
                        || edges_too_close(e, curr, e[curr].next, next_y));
                trapezoid_row(b, row, left, rite, next_left, next_rite, left_dy, e[curr].dy, full, no_real);
                prev_rite = fx::ceil_to_int(rite.max(e[curr].x));
            } else {
                if is_left {
                    left = e[curr].x.max(left_clip);
                    left_dy = e[curr].dy;
                    left_e = curr;
                }
                e[curr].go_y_shift(next_y, y_shift);
            }
            let next = e[curr].next;
            while e[curr].lower_y <= next_y {
                if !e[curr].continue_curve() {
                    break;
                }
            }
            if e[curr].lower_y <= next_y {
                remove_edge(e, curr);
            } else {
                update_next_next_y(e[curr].lower_y, next_y, &mut next_next_y);
                let new_x = e[curr].x;
                if new_x < prev_x {
                    backward_insert_edge_based_on_x(e, curr);
                } else {
                    prev_x = new_x;
                }
                if !skip_intersect {
                    check_intersection(e, curr, next_y, &mut next_next_y);
                }
            }
            curr = next;
        }
        if in_interval {
            let no_real = full == 0xFF && edges_too_close(e, e[left_e].prev, left_e, next_y);
            let next_left = left_clip.max(e[left_e].x);
            trapezoid_row(b, row, left, right_clip, next_left, right_clip, left_dy, 0, full, no_real);
        }
        y = next_y;
        if y >= fx::from_int(stop_y) {
            break;
        }
        insert_new_edges(e, curr, y, &mut next_next_y);
    }
}
