//! Run-time failures as values: how compiled code reports a failed check (an operand out of
//! its bounds, an allocation that cannot be made) without taking the process down.
//!
//! The protocol `convert-to-llvm` emits:
//! * at a failed check, `ftuner_rt_fail(msg)` (a NUL-terminated message naming the op and
//!   its location, a constant of the module), then the function returns at once (its
//!   results are undefined);
//! * after a call that may fail (a function of the module that checks something, a
//!   parallel loop whose body does), `ftuner_rt_failed()`: when set, the caller returns too.
//!
//! The record is per thread; the thread pool moves a failure of a worker's chunk to the
//! thread that started the loop ([`crate::parallel`]). The first failure of a call wins.
//! Whoever calls compiled code clears the record before ([`clear`]) and reads it after
//! ([`take`]): the runtime crate turns it into an error, the AOT wrapper into an error code.
//! A failed call may leak the temporaries it had allocated before the check.

use std::cell::Cell;
use std::ffi::{c_char, CStr};

thread_local! {
    /// The message of the first failed check on this thread since the last `clear`.
    static FAILED: Cell<*const c_char> = const { Cell::new(std::ptr::null()) };
}

/// What compiled code calls at a failed check: record `msg` unless a failure is recorded.
///
/// # Safety
/// `msg` must be a NUL-terminated string alive as long as the compiled module.
pub unsafe extern "C" fn ftuner_rt_fail(msg: *const c_char) {
    FAILED.with(|f| {
        if f.get().is_null() {
            f.set(msg);
        }
    });
}

/// What compiled code calls after a call that may fail: 1 when a failure is recorded.
pub extern "C" fn ftuner_rt_failed() -> i32 {
    FAILED.with(|f| i32::from(!f.get().is_null()))
}

/// Forget a recorded failure (before a call).
pub fn clear() {
    FAILED.with(|f| f.set(std::ptr::null()));
}

/// The recorded failure, cleared (after a call).
pub fn take() -> Option<String> {
    let p = take_raw();
    if p.is_null() {
        return None;
    }
    // SAFETY: only `ftuner_rt_fail` records pointers: NUL-terminated module constants.
    Some(unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned())
}

/// The recorded message pointer (null when none), cleared.
pub(crate) fn take_raw() -> *const c_char {
    FAILED.with(|f| f.replace(std::ptr::null()))
}

/// Record a message pointer taken on another thread (the thread pool's hand-over).
pub(crate) fn put_raw(p: *const c_char) {
    if !p.is_null() {
        // SAFETY: `p` came from `take_raw`, i.e. from `ftuner_rt_fail`.
        unsafe { ftuner_rt_fail(p) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_failure_wins_and_take_clears() {
        clear();
        assert_eq!(ftuner_rt_failed(), 0);
        // SAFETY: static NUL-terminated strings.
        unsafe {
            ftuner_rt_fail(c"first".as_ptr());
            ftuner_rt_fail(c"second".as_ptr());
        }
        assert_eq!(ftuner_rt_failed(), 1);
        assert_eq!(take().as_deref(), Some("first"));
        assert_eq!(ftuner_rt_failed(), 0);
        assert_eq!(take(), None);
    }
}
