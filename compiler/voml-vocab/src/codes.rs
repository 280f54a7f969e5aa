//! Record-type and event-type codes of PICL "new" format traces, with their names both ways.
//!
//! Names are matched case-insensitively and returned in lower case, which is how VOML
//! specifications spell them (`rtype="pg-entry"`).

/// Canonical record-type names; [`record_type_name`] returns these.
const RECORD_TYPES: &[(i64, &str)] = &[
    (-2, "mark"),
    (-3, "entry"),
    (-4, "exit"),
    (-5, "label"),
    (-6, "dd"),
    (-7, "message"),
    (-101, "timestat"),
    (-102, "countstat"),
    (-103, "sendvolstat"),
    (-104, "recvvolstat"),
    (-105, "sizevolstat"),
    (-201, "machinesubset"),
    (-202, "processsubset"),
    (-203, "eventsubset"),
    (CALLBACK_RECORD_TYPE, "callback"),
];

/// The record type of the runtime's own events (start and end of input, clock ticks, view
/// resizes), so that EP components can take them like data events (`rtype="callback"`).
pub const CALLBACK_RECORD_TYPE: i64 = -1000;

/// Names accepted on input only. `pg-entry`/`pg-exit` are the VOML paper's names for the
/// entry/exit records of the tracing event (-901: a node joins or leaves); the `event*` names
/// are the `tracedefs.h` constants, so specifications written against PICL headers also work.
const RECORD_TYPE_ALIASES: &[(i64, &str)] = &[
    (-3, "pg-entry"),
    (-4, "pg-exit"),
    (-2, "eventmark"),
    (-3, "evententry"),
    (-4, "eventexit"),
    (-5, "eventlabel"),
    (-6, "eventdd"),
    (-7, "eventmessage"),
];

/// Event types predefined by MPICL (`tracedefs.h`, as transcribed in MPICL-metrics'
/// `codes.sql`). User events have non-negative codes and no name.
///
/// -201/-202 are commented out in `codes.sql`, presumably because that table keys on the code
/// and they collide with the record types -201/-202; event and record types are separate
/// name spaces, so they are kept here.
const EVENT_TYPES: &[(i64, &str)] = &[
    (-1, "wildcard"),
    (-11, "openkey"),
    (-12, "closekey"),
    (-13, "whokey"),
    (-14, "recvinfokey"),
    (-15, "bufferkey"),
    (-16, "commcheckkey"),
    (-21, "sendkey"),
    (-22, "bsendkey"),
    (-23, "ssendkey"),
    (-24, "rsendkey"),
    (-27, "sendbegkey"),
    (-28, "senddonekey"),
    (-29, "sendnotdonekey"),
    (-30, "sendendkey"),
    (-31, "sendendblockkey"),
    (-32, "sendcancelkey"),
    (-33, "bsendbegkey"),
    (-34, "bsenddonekey"),
    (-35, "bsendnotdonekey"),
    (-36, "bsendendkey"),
    (-37, "bsendendblockkey"),
    (-38, "bsendcancelkey"),
    (-39, "ssendbegkey"),
    (-40, "ssenddonekey"),
    (-41, "ssendnotdonekey"),
    (-42, "ssendendkey"),
    (-43, "ssendendblockkey"),
    (-44, "ssendcancelkey"),
    (-45, "rsendbegkey"),
    (-46, "rsenddonekey"),
    (-47, "rsendnotdonekey"),
    (-48, "rsendendkey"),
    (-49, "rsendendblockkey"),
    (-50, "rsendcancelkey"),
    (-51, "recvkey"),
    (-52, "recvblockkey"),
    (-53, "foundkey"),
    (-54, "notfoundkey"),
    (-55, "waitkey"),
    (-56, "waitblockkey"),
    (-57, "recvbegkey"),
    (-58, "recvdonekey"),
    (-59, "recvnotdonekey"),
    (-60, "recvendkey"),
    (-61, "recvendblockkey"),
    (-62, "recvcancelkey"),
    (-201, "fileopenkey"),
    (-202, "fileclosekey"),
    (-221, "writekey"),
    (-251, "readkey"),
    (-401, "clocksynckey"),
    (-402, "barrierkey"),
    (-501, "getprocskey"),
    (-502, "relprocskey"),
    (-503, "loadkey"),
    (-601, "ridlekey"),
    (-602, "systemohkey"),
    (-603, "userohkey"),
    (-756, "packkey"),
    (-773, "unpackkey"),
    (-780, "allgatherkey"),
    (-782, "allreducekey"),
    (-783, "alltoallkey"),
    (-785, "bcastkey"),
    (-786, "gatherkey"),
    (-790, "reducekey"),
    (-791, "reducescatterkey"),
    (-792, "scankey"),
    (-793, "scatterkey"),
    (-804, "commcreatekey"),
    (-805, "commdupkey"),
    (-806, "commfreekey"),
    (-812, "commsplitkey"),
    (-826, "intercommcreatekey"),
    (-827, "intercommmergekey"),
    (-841, "cartcreatekey"),
    (-846, "cartsubkey"),
    (-849, "graphcreatekey"),
    (-901, "tracekey"),
    (-902, "tstatskey"),
    (-903, "tfileskey"),
    (-904, "tlevelkey"),
    (-905, "tinfokey"),
    (-911, "tmsgkey"),
    (-912, "tflushkey"),
    (-913, "tfullkey"),
    (-914, "twrapkey"),
    (-1001, "usersubsetkey"),
    (-1002, "piclsubsetkey"),
    (-1011, "commsubsetkey"),
    (-1012, "sendsubsetkey"),
    (-1013, "recvsubsetkey"),
    (-1014, "blocksubsetkey"),
    (-1201, "iosubsetkey"),
    (-1401, "syncsubsetkey"),
    (-1501, "allocsubsetkey"),
    (-1601, "gensubsetkey"),
    (-1901, "tracesubsetkey"),
    (-1902, "flushsubsetkey"),
];

fn code_of(tables: &[&[(i64, &str)]], name: &str) -> Option<i64> {
    let name = name.trim();
    tables
        .iter()
        .flat_map(|t| t.iter())
        .find(|(_, n)| n.eq_ignore_ascii_case(name))
        .map(|&(code, _)| code)
}

fn name_of(table: &[(i64, &'static str)], code: i64) -> Option<&'static str> {
    table.iter().find(|&&(c, _)| c == code).map(|&(_, n)| n)
}

/// The code of a record-type name (`"entry"`, `"PG-Exit"`, `"timestat"`, …), ignoring case
/// and surrounding whitespace.
pub fn record_type_code(name: &str) -> Option<i64> {
    code_of(&[RECORD_TYPES, RECORD_TYPE_ALIASES], name)
}

/// Every record-type name a specification may write, aliases included (for suggestions).
pub fn record_type_names() -> impl Iterator<Item = &'static str> {
    RECORD_TYPES
        .iter()
        .chain(RECORD_TYPE_ALIASES)
        .map(|(_, name)| *name)
}

/// The canonical lower-case name of a record-type code; aliases are never returned.
pub fn record_type_name(code: i64) -> Option<&'static str> {
    name_of(RECORD_TYPES, code)
}

/// The code of a predefined event-type name (`"tracekey"`, `"SENDKEY"`, …), ignoring case
/// and surrounding whitespace.
pub fn event_type_code(name: &str) -> Option<i64> {
    code_of(&[EVENT_TYPES], name)
}

/// The lower-case name of a predefined event-type code; `None` for user events.
pub fn event_type_name(code: i64) -> Option<&'static str> {
    name_of(EVENT_TYPES, code)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn record_types_both_ways() {
        for &(code, name) in RECORD_TYPES {
            assert_eq!(record_type_code(name), Some(code));
            assert_eq!(record_type_name(code), Some(name));
            assert_eq!(record_type_code(&name.to_ascii_uppercase()), Some(code));
        }
        assert_eq!(record_type_code("pg-entry"), Some(-3));
        assert_eq!(record_type_code("PG-EXIT"), Some(-4));
        assert_eq!(record_type_code(" Entry "), Some(-3));
        assert_eq!(record_type_code("EVENTDD"), Some(-6));
        assert_eq!(record_type_name(-3), Some("entry"));
        assert_eq!(record_type_code("entr"), None);
        assert_eq!(record_type_name(-1), None);
        assert_eq!(record_type_name(3), None);
    }

    #[test]
    fn event_types_both_ways() {
        for &(code, name) in EVENT_TYPES {
            assert_eq!(event_type_code(name), Some(code), "{name}");
            assert_eq!(event_type_name(code), Some(name));
        }
        assert_eq!(event_type_code("TRACEKEY"), Some(-901));
        assert_eq!(event_type_code("sendkey"), Some(-21));
        assert_eq!(event_type_name(-785), Some("bcastkey"));
        assert_eq!(event_type_name(1), None);
        assert_eq!(event_type_code("entry"), None);
    }

    #[test]
    fn tables_have_no_duplicates() {
        for table in [RECORD_TYPES, EVENT_TYPES] {
            for (i, a) in table.iter().enumerate() {
                for b in &table[i + 1..] {
                    assert_ne!(a.0, b.0);
                    assert_ne!(a.1, b.1);
                }
            }
        }
        for &(_, alias) in RECORD_TYPE_ALIASES {
            assert!(RECORD_TYPES.iter().all(|&(_, n)| n != alias));
        }
    }
}
