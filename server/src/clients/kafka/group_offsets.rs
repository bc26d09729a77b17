//! Every committed offset of many consumer groups through one client, with
//! librdkafka's ListConsumerGroupOffsets admin call. rust-rdkafka has no
//! safe wrapper for it (fede1024/rust-rdkafka#659), so this is the one place
//! that calls librdkafka directly. librdkafka takes one group per call, so
//! the calls are issued on one queue, up to [`IN_FLIGHT`] at a time, and
//! their answers collected as they come: one OffsetFetch per group over the
//! client's existing connections, instead of a client per group.

use rdkafka::consumer::{BaseConsumer, Consumer};
use rdkafka_sys as rd;
use std::collections::HashMap;
use std::ffi::{CStr, CString, c_void};
use std::ptr;
use std::time::{Duration, Instant};

const IN_FLIGHT: usize = 64;

/// (topic, partition) → committed offset (`None`: never committed).
pub type Offsets = Vec<((String, i32), Option<i64>)>;

/// Owns a librdkafka object and frees it with its destructor.
struct Owned<T>(*mut T, unsafe extern "C" fn(*mut T));

impl<T> Drop for Owned<T> {
    fn drop(&mut self) {
        if !self.0.is_null() {
            // SAFETY: the pointer came from the matching librdkafka
            // constructor and is freed exactly once, here.
            unsafe { (self.1)(self.0) }
        }
    }
}

fn text(p: *const std::ffi::c_char) -> String {
    if p.is_null() {
        return String::new();
    }
    // SAFETY: librdkafka returns NUL-terminated strings that live as long as
    // the event they belong to, which outlives this call.
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

/// Reads the committed offsets of `groups`. Each group gets its offsets or
/// an error message; groups with no answer within `timeout` get an error.
pub fn list(
    client: &BaseConsumer,
    groups: &[String],
    timeout: Duration,
) -> HashMap<String, Result<Offsets, String>> {
    let rk = client.client().native_ptr();
    let mut out: HashMap<String, Result<Offsets, String>> = HashMap::new();
    // SAFETY: rk is a live client for the duration of this function.
    let queue = Owned(
        unsafe { rd::rd_kafka_queue_new(rk) },
        rd::rd_kafka_queue_destroy,
    );
    let deadline = Instant::now() + timeout;
    let timeout_ms = i32::try_from(timeout.as_millis()).unwrap_or(i32::MAX);
    let mut next = 0;
    let mut pending = 0;
    while next < groups.len() || pending > 0 {
        while next < groups.len() && pending < IN_FLIGHT {
            let Ok(name) = CString::new(groups[next].as_str()) else {
                out.insert(groups[next].clone(), Err("group name contains NUL".into()));
                next += 1;
                continue;
            };
            // SAFETY: options and request are created, used for one call and
            // freed; librdkafka copies what it keeps. The opaque is the
            // group's index, returned with its result event.
            unsafe {
                let options = Owned(
                    rd::rd_kafka_AdminOptions_new(
                        rk,
                        rd::rd_kafka_admin_op_t::RD_KAFKA_ADMIN_OP_LISTCONSUMERGROUPOFFSETS,
                    ),
                    rd::rd_kafka_AdminOptions_destroy,
                );
                rd::rd_kafka_AdminOptions_set_request_timeout(
                    options.0,
                    timeout_ms,
                    ptr::null_mut(),
                    0,
                );
                rd::rd_kafka_AdminOptions_set_opaque(options.0, next as *mut c_void);
                let mut request =
                    rd::rd_kafka_ListConsumerGroupOffsets_new(name.as_ptr(), ptr::null());
                rd::rd_kafka_ListConsumerGroupOffsets(rk, &mut request, 1, options.0, queue.0);
                rd::rd_kafka_ListConsumerGroupOffsets_destroy(request);
            }
            next += 1;
            pending += 1;
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        let wait_ms = i32::try_from(left.as_millis()).unwrap_or(i32::MAX);
        // SAFETY: polling a live queue; the event is freed by Owned.
        let event = Owned(
            unsafe { rd::rd_kafka_queue_poll(queue.0, wait_ms) },
            rd::rd_kafka_event_destroy,
        );
        if event.0.is_null() {
            break;
        }
        // SAFETY: reading a live event; every pointer read below belongs to
        // the event and is copied out before it is freed.
        unsafe {
            let index = rd::rd_kafka_event_opaque(event.0) as usize;
            let Some(group) = groups.get(index) else {
                continue;
            };
            pending = pending.saturating_sub(1);
            if rd::rd_kafka_event_error(event.0)
                != rd::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR_NO_ERROR
            {
                out.insert(
                    group.clone(),
                    Err(text(rd::rd_kafka_event_error_string(event.0))),
                );
                continue;
            }
            let result = rd::rd_kafka_event_ListConsumerGroupOffsets_result(event.0);
            if result.is_null() {
                out.insert(group.clone(), Err("unexpected answer".into()));
                continue;
            }
            let mut count = 0_usize;
            let results = rd::rd_kafka_ListConsumerGroupOffsets_result_groups(result, &mut count);
            for i in 0..count {
                let g = *results.add(i);
                let error = rd::rd_kafka_group_result_error(g);
                if !error.is_null() {
                    out.insert(group.clone(), Err(text(rd::rd_kafka_error_string(error))));
                    continue;
                }
                let list = rd::rd_kafka_group_result_partitions(g);
                let mut offsets = Vec::new();
                if !list.is_null() {
                    for j in 0..usize::try_from((*list).cnt).unwrap_or(0) {
                        let p = &*(*list).elems.add(j);
                        if p.err != rd::rd_kafka_resp_err_t::RD_KAFKA_RESP_ERR_NO_ERROR {
                            continue;
                        }
                        offsets.push((
                            (text(p.topic), p.partition),
                            (p.offset >= 0).then_some(p.offset),
                        ));
                    }
                }
                out.insert(group.clone(), Ok(offsets));
            }
        }
    }
    for g in groups {
        out.entry(g.clone())
            .or_insert_with(|| Err(format!("no answer within {} ms", timeout.as_millis())));
    }
    out
}
