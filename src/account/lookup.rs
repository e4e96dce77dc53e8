//! Per-endpoint lookups in the series-keyed maps of [`Evidence`](super::evidence::Evidence).
//! A [`SeriesKey`] sorts by endpoint first, so one endpoint's series are a contiguous range of
//! the map: a stage asking about one endpoint pays O(log n + its series), never a scan of every
//! series of the run (which made accounting quadratic in endpoints).

use super::evidence::SeriesKey;
use std::collections::BTreeMap;
use std::sync::Arc;

/// The entries of `map` whose key is on `endpoint`, in key order.
pub fn of_endpoint<'a, V>(
    map: &'a BTreeMap<SeriesKey, V>,
    endpoint: &'a str,
) -> impl Iterator<Item = (&'a SeriesKey, &'a V)> + 'a {
    // The least key of the endpoint: the empty spelling and the empty label set sort first.
    let first = SeriesKey {
        endpoint_url: Arc::from(endpoint),
        spelling: Arc::from(""),
        labels: Default::default(),
    };
    map.range(first..)
        .take_while(move |(k, _)| &*k.endpoint_url == endpoint)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(endpoint: &str, spelling: &str, labels: &[(&str, &str)]) -> SeriesKey {
        SeriesKey {
            endpoint_url: Arc::from(endpoint),
            spelling: Arc::from(spelling),
            labels: std::sync::Arc::new(
                labels
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            ),
        }
    }

    #[test]
    fn yields_exactly_the_endpoints_keys_in_order() {
        let keys = [
            key("http://a:1/metrics", "x", &[]),
            key("http://a:1/metrics", "", &[("l", "1")]),
            key("http://a:1/metricsz", "x", &[]),
            key("http://a:10/metrics", "x", &[]),
            key("http://a:1/metric", "zz", &[("z", "9")]),
            key("http://b:1/metrics", "", &[]),
        ];
        let map: BTreeMap<SeriesKey, usize> = keys
            .iter()
            .cloned()
            .enumerate()
            .map(|(i, k)| (k, i))
            .collect();
        let got: Vec<usize> = of_endpoint(&map, "http://a:1/metrics")
            .map(|(_, v)| *v)
            .collect();
        assert_eq!(got, vec![1, 0]);
        let scan: Vec<usize> = map
            .iter()
            .filter(|(k, _)| &*k.endpoint_url == "http://a:1/metrics")
            .map(|(_, v)| *v)
            .collect();
        assert_eq!(got, scan);
        assert_eq!(of_endpoint(&map, "http://c:1/metrics").count(), 0);
        assert_eq!(of_endpoint(&map, "").count(), 0);
    }
}
