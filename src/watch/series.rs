//! Time series for charts: thinning long ranges to what a chart can show
//! without hiding peaks or gaps, and starting a group's at its first
//! sighting.

/// The chart windows' bounds: an hour to a week, in hours.
pub fn window_hours(hours: i64) -> i64 {
    hours.clamp(1, 24 * 7)
}

/// Thins `points` (time order) to at most `max` by taking, for each run of
/// neighbours, the time of its first point and the largest value. A run of
/// only gaps stays a gap; a gap next to values is dropped only when it would
/// not be seen at that scale anyway.
pub fn downsample(points: &[(i64, Option<i64>)], max: usize) -> Vec<(i64, Option<i64>)> {
    if points.len() <= max || max == 0 {
        return points.to_vec();
    }
    let per = points.len().div_ceil(max);
    points
        .chunks(per)
        .map(|run| (run[0].0, run.iter().filter_map(|(_, v)| *v).max()))
        .collect()
}

/// A group's series from when it was first seen (`first_seen`, in ms):
/// the passes and buckets before it had nothing of the group to read, so
/// they are left out, and the chart draws that stretch as "not watched
/// yet" instead of as gaps, which read as an outage. A point with a figure
/// is kept wherever it falls (a bucket starts before the sighting in it).
pub fn since_first_seen(
    points: &[(i64, Option<i64>)],
    first_seen: Option<i64>,
) -> &[(i64, Option<i64>)] {
    let Some(first) = first_seen else {
        return points;
    };
    let before = points
        .iter()
        .take_while(|(at, v)| v.is_none() && *at < first)
        .count();
    &points[before..]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_new_groups_series_starts_at_its_first_sighting() {
        let p = vec![
            (0, None),
            (15, None),
            (30, Some(4)),
            (45, None),
            (60, Some(2)),
        ];
        assert_eq!(since_first_seen(&p, Some(30)), &p[2..]);
        // A minute bucket starts before the sighting inside it.
        assert_eq!(since_first_seen(&p, Some(35)), &p[2..]);
        // Gaps after the sighting stay gaps; an old group keeps them all.
        assert_eq!(since_first_seen(&p, Some(50)), &p[2..]);
        assert_eq!(since_first_seen(&p, Some(-10)), &p[..]);
        assert_eq!(since_first_seen(&p, None), &p[..]);
    }

    #[test]
    fn keeps_short_series() {
        let p = vec![(0, Some(1)), (1, None), (2, Some(3))];
        assert_eq!(downsample(&p, 10), p);
    }

    #[test]
    fn keeps_peaks_and_gaps() {
        let mut p: Vec<(i64, Option<i64>)> = (0..100).map(|i| (i, Some(1))).collect();
        p[37].1 = Some(500);
        for g in p.iter_mut().skip(80).take(10) {
            g.1 = None;
        }
        let d = downsample(&p, 10);
        assert_eq!(d.len(), 10);
        assert_eq!(d[3], (30, Some(500)));
        assert_eq!(d[8], (80, None));
    }
}
