//! Roles (CONTRACT section 3): each endpoint becomes `prefill`, `decode`, `unified`,
//! `frontend` or `excluded`, with the source of that decision: `launch` (the launch facts list
//! its `host:port`), `labels` (`dynamo_component`, `disaggregation_mode`, `engine_type`,
//! `engine_role`, a role in the URL path, or frontend-only families), or `single_endpoint`
//! (exactly one engine endpoint and the launch facts say not disaggregated).

use super::evidence::LabelSets;
use super::output::Roles;
use super::verdict::{Reason, ReasonCode};
use crate::engines::Engine;
use crate::inspect::{host_port, role_from_path};
use crate::model::{Labels, LaunchFacts, Role};
use crate::strmap::StrMap;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, schemars::JsonSchema,
)]
#[cfg_attr(target_arch = "wasm32", derive(tsify::Tsify))]
#[serde(rename_all = "snake_case")]
pub enum RoleSource {
    Launch,
    Labels,
    SingleEndpoint,
    Unresolved,
}

/// What the role step needs to know about one endpoint.
#[derive(Debug, Clone, Default)]
pub struct EndpointFacts {
    /// Exports engine families (vllm:, sglang:, trtllm_, atom:).
    pub has_engine: bool,
    /// Exports Dynamo frontend families.
    pub has_frontend: bool,
    /// Label sets of its series (role labels are read from them): the evidence's copy, one
    /// for the endpoints of a deployment that have the same (see `share_equal`).
    pub label_sets: Arc<LabelSets>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RoleDecision {
    pub role: Option<Role>,
    pub source: RoleSource,
}

/// A role named by one label value, if any. Dynamo names its aggregated worker and the
/// decode worker of a P/D deployment alike (`backend`): it is decode only when the run also
/// has a `prefill` component (`disaggregated_run`).
fn role_from_labels(labels: &Labels, disaggregated_run: bool) -> Option<Role> {
    let get = |k: &str| labels.get(k).map(|v| v.to_ascii_lowercase());
    if let Some(c) = get("dynamo_component").or_else(|| get("component")) {
        match c.as_str() {
            "prefill" | "prefill_worker" => return Some(Role::Prefill),
            "backend" if disaggregated_run => return Some(Role::Decode),
            "backend" => return Some(Role::Unified),
            "decode" | "decode_worker" => return Some(Role::Decode),
            "frontend" | "router" => return Some(Role::Frontend),
            _ => {}
        }
    }
    if let Some(m) = get("disaggregation_mode") {
        match m.as_str() {
            "prefill" | "context" | "ctx" => return Some(Role::Prefill),
            "decode" | "generation" | "gen" => return Some(Role::Decode),
            "prefill_and_decode" | "aggregated" | "agg" => return Some(Role::Unified),
            _ => {}
        }
    }
    for key in ["engine_type", "engine_role", "worker_type"] {
        if let Some(v) = get(key) {
            match v.as_str() {
                "prefill" => return Some(Role::Prefill),
                "decode" => return Some(Role::Decode),
                "unified" | "aggregated" => return Some(Role::Unified),
                _ => {}
            }
        }
    }
    None
}

/// The launch facts' roles by `host:port`, built once (a lookup per endpoint instead of a
/// scan of every launch list). The lists are sorted first, so the map grows at its end: put
/// in list order, a launch file of 100,000 shuffled endpoints took 2 s (quadratic).
fn launch_roles(launch: &LaunchFacts) -> StrMap<RoleSet> {
    let lists = [
        (&launch.prefill_endpoints, Role::Prefill),
        (&launch.decode_endpoints, Role::Decode),
        (&launch.agg_endpoints, Role::Unified),
    ];
    let listed = lists
        .iter()
        .flat_map(|(list, role)| list.iter().map(move |e| (e.as_str(), *role)));
    let roles = launch.endpoint_roles.iter().map(|(e, r)| (e.as_str(), *r));
    let mut listed: Vec<(&str, Role)> = listed.chain(roles).collect();
    crate::sort::sort_by(&mut listed, |a, b| a.0.cmp(b.0));
    let mut roles: StrMap<RoleSet> = StrMap::new();
    for (hp, role) in listed {
        roles.get_or_default(hp).insert(role);
    }
    roles
}

/// Decide every endpoint's role. Reasons: `role_conflict` where launch facts and labels
/// disagree, `role_unresolved` for an engine endpoint nothing decides.
pub fn assign(
    endpoints: &BTreeMap<Arc<str>, EndpointFacts>,
    launch: Option<&LaunchFacts>,
    reasons: &mut Vec<Reason>,
) -> BTreeMap<Arc<str>, RoleDecision> {
    let launch_lists_roles = launch.is_some_and(|l| {
        !(l.prefill_endpoints.is_empty()
            && l.decode_endpoints.is_empty()
            && l.agg_endpoints.is_empty()
            && l.endpoint_roles.is_empty())
    });
    let engine_endpoints = endpoints.values().filter(|e| e.has_engine).count();
    let disaggregated_run = launch.and_then(|l| l.disaggregated).unwrap_or_else(|| {
        // Each shared copy of sets looked at once (many endpoints, one deployment's sets).
        let mut last: Option<&Arc<LabelSets>> = None;
        endpoints.values().any(|e| {
            if last.is_some_and(|l| Arc::ptr_eq(l, &e.label_sets)) {
                return false;
            }
            last = Some(&e.label_sets);
            e.label_sets.iter().any(|l| {
                l.get("dynamo_component")
                    .or_else(|| l.get("component"))
                    .is_some_and(|c| c.eq_ignore_ascii_case("prefill"))
            })
        })
    });
    let run = RunFacts {
        launch,
        launch_roles: launch.map(launch_roles).unwrap_or_default(),
        launch_lists_roles,
        engine_endpoints,
        disaggregated_run,
    };
    let mut labelled = LabelledRoles::default();
    let decided: Vec<(Arc<str>, RoleDecision)> = endpoints
        .iter()
        .map(|(url, facts)| {
            let from_labels = labelled.of(&facts.label_sets, run.disaggregated_run);
            (
                Arc::clone(url),
                decide(url, facts, from_labels, &run, reasons),
            )
        })
        .collect();
    let mut decisions = BTreeMap::new();
    super::lookup::insert_sorted(&mut decisions, decided);
    decisions
}

/// The roles an endpoint's label sets name, found once per shared copy of the sets (the
/// endpoints of one deployment share theirs): per endpoint, every set was asked for its role
/// labels.
#[derive(Default)]
struct LabelledRoles {
    last: Option<(Arc<LabelSets>, RoleSet)>,
}

impl LabelledRoles {
    fn of(&mut self, sets: &Arc<LabelSets>, disaggregated_run: bool) -> RoleSet {
        if let Some((s, roles)) = &self.last {
            if Arc::ptr_eq(s, sets) {
                return *roles;
            }
        }
        let mut roles = RoleSet::default();
        for role in sets
            .iter()
            .filter_map(|l| role_from_labels(l, disaggregated_run))
        {
            roles.insert(role);
        }
        self.last = Some((Arc::clone(sets), roles));
        roles
    }
}

/// What deciding one endpoint's role needs to know about the run.
struct RunFacts<'a> {
    launch: Option<&'a LaunchFacts>,
    launch_roles: StrMap<RoleSet>,
    launch_lists_roles: bool,
    engine_endpoints: usize,
    disaggregated_run: bool,
}

/// One endpoint's role: launch facts first, then labels (or the URL path, or frontend
/// families), then the single-endpoint rule.
fn decide(
    url: &str,
    facts: &EndpointFacts,
    mut labelled: RoleSet,
    run: &RunFacts<'_>,
    reasons: &mut Vec<Reason>,
) -> RoleDecision {
    let (launch, launch_lists_roles, engine_endpoints) =
        (run.launch, run.launch_lists_roles, run.engine_endpoints);
    let hp = host_port(url);
    let from_launch = run
        .launch_roles
        .get(hp.as_str())
        .copied()
        .unwrap_or_default();
    if let Some(r) = role_from_path(url) {
        labelled.insert(r);
    }
    // A Dynamo frontend may re-export its workers' series (with their role labels): the
    // frontend families decide.
    if facts.has_frontend {
        labelled.clear();
        labelled.insert(Role::Frontend);
    }
    if from_launch.len() > 1 {
        reasons.push(
            Reason::new(
                ReasonCode::RoleConflict,
                format!("the launch facts list {hp} under several roles"),
            )
            .at(url),
        );
        RoleDecision {
            role: None,
            source: RoleSource::Unresolved,
        }
    } else if let Some(r) = &from_launch.first() {
        // A frontend (or an excluded endpoint) may re-export its workers' series with their
        // role labels: the launch facts decide.
        let relabels = matches!(r, Role::Frontend | Role::Excluded);
        if !relabels && labelled.iter().any(|l| l != *r && l != Role::Frontend) {
            reasons.push(
                Reason::new(
                    ReasonCode::RoleConflict,
                    format!(
                        "launch facts say {} but the series labels say {}",
                        role_name(*r),
                        names(&labelled)
                    ),
                )
                .at(url),
            );
            RoleDecision {
                role: None,
                source: RoleSource::Unresolved,
            }
        } else {
            RoleDecision {
                role: Some(*r),
                source: RoleSource::Launch,
            }
        }
    } else if labelled.len() == 1 {
        RoleDecision {
            role: labelled.first(),
            source: RoleSource::Labels,
        }
    } else if labelled.len() > 1 {
        reasons.push(
            Reason::new(
                ReasonCode::RoleConflict,
                format!("series labels name several roles: {}", names(&labelled)),
            )
            .at(url),
        );
        RoleDecision {
            role: None,
            source: RoleSource::Unresolved,
        }
    } else if !facts.has_engine {
        RoleDecision {
            role: Some(Role::Excluded),
            source: if launch_lists_roles {
                RoleSource::Launch
            } else {
                RoleSource::Labels
            },
        }
    } else if engine_endpoints == 1
        && launch.is_some_and(|l| l.disaggregated == Some(false))
        && !launch_lists_roles
    {
        RoleDecision {
            role: Some(Role::Unified),
            source: RoleSource::SingleEndpoint,
        }
    } else {
        reasons.push(
            Reason::new(
                ReasonCode::RoleUnresolved,
                if launch_lists_roles {
                    format!("{hp} exports engine metrics but no launch list, label or path names its role")
                } else {
                    format!("{hp}: no launch facts, role label or URL path decides its role")
                },
            )
            .at(url),
        );
        RoleDecision {
            role: None,
            source: RoleSource::Unresolved,
        }
    }
}

/// A role as the result spells it.
pub fn role_name(r: Role) -> &'static str {
    match r {
        Role::Prefill => "prefill",
        Role::Decode => "decode",
        Role::Unified => "unified",
        Role::Frontend => "frontend",
        Role::Excluded => "excluded",
    }
}

fn names(roles: &RoleSet) -> String {
    roles.iter().map(role_name).collect::<Vec<_>>().join(", ")
}

/// A set of roles, in `Role`'s order: one bit per role (no `BTreeSet` code for a type of
/// five values in the `.wasm`, issue 11).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
struct RoleSet(u8);

impl RoleSet {
    const ALL: [Role; 5] = [
        Role::Prefill,
        Role::Decode,
        Role::Unified,
        Role::Frontend,
        Role::Excluded,
    ];

    fn insert(&mut self, r: Role) {
        self.0 |= 1 << (r as u8);
    }

    fn clear(&mut self) {
        self.0 = 0;
    }

    fn len(&self) -> usize {
        self.0.count_ones() as usize
    }

    fn iter(&self) -> impl Iterator<Item = Role> + '_ {
        Self::ALL
            .into_iter()
            .filter(|r| self.0 & (1 << (*r as u8)) != 0)
    }

    fn first(&self) -> Option<Role> {
        self.iter().next()
    }
}

/// Prefill and unified endpoints are priced; decode re-counts prompts it never served.
pub fn is_priced_role(r: Option<Role>) -> bool {
    matches!(r, Some(Role::Prefill | Role::Unified))
}

/// The role stage's result: every endpoint's decision and the priced engine endpoints.
#[derive(Debug, Clone, Default)]
pub struct Deployment {
    pub decisions: BTreeMap<Arc<str>, RoleDecision>,
    /// Engine endpoints with the prefill or unified role, sorted.
    pub priced: Vec<String>,
    /// Some engine endpoint is priced or unresolved (so might be priced).
    pub maybe_priced: bool,
    /// Endpoints whose launch roles the metric shapes contradicted (`check_shapes`): still
    /// checked like priced ones, since one of them is the real prefill.
    pub withdrawn: BTreeSet<Arc<str>>,
}

impl Deployment {
    pub fn new(
        decisions: BTreeMap<Arc<str>, RoleDecision>,
        engines: &BTreeMap<Arc<str>, Engine>,
    ) -> Self {
        // Each engine endpoint's role, in URL order.
        let mut decided = super::lookup::Cursor::new(&decisions);
        let roles: Vec<(&Arc<str>, Option<Role>)> = engines
            .keys()
            .map(|u| (u, decided.get(u).and_then(|d| d.role)))
            .collect();
        let priced = roles
            .iter()
            .filter(|(_, r)| is_priced_role(*r))
            .map(|(u, _)| u.to_string())
            .collect();
        let maybe_priced = roles.iter().any(|(_, r)| is_priced_role(*r) || r.is_none());
        Deployment {
            decisions,
            priced,
            maybe_priced,
            withdrawn: BTreeSet::new(),
        }
    }

    pub fn role_of(&self, url: &str) -> Option<Role> {
        self.decisions.get(url).and_then(|d| d.role)
    }
}

/// The verdict's `roles` block: every endpoint exactly once. Its source is the one source
/// that decided the engine endpoints, or `unresolved` when any is unresolved.
pub fn roles_block(dep: &Deployment, engines: &BTreeMap<Arc<str>, Engine>) -> Roles {
    let mut out = Roles {
        source: RoleSource::Unresolved,
        prefill: vec![],
        decode: vec![],
        unified: vec![],
        frontend: vec![],
        excluded: vec![],
        unresolved: vec![],
    };
    let mut sources_used: BTreeSet<RoleSource> = BTreeSet::new();
    let mut engine_of = super::lookup::Cursor::new(engines);
    for (url, d) in &dep.decisions {
        let list = match d.role {
            Some(Role::Prefill) => &mut out.prefill,
            Some(Role::Decode) => &mut out.decode,
            Some(Role::Unified) => &mut out.unified,
            Some(Role::Frontend) => &mut out.frontend,
            Some(Role::Excluded) => &mut out.excluded,
            None => &mut out.unresolved,
        };
        list.push(url.to_string());
        if d.role.is_some() && engine_of.get(url).is_some() {
            sources_used.insert(d.source);
        }
    }
    if out.unresolved.is_empty() {
        out.source = sources_used
            .into_iter()
            .next()
            .unwrap_or(RoleSource::Unresolved);
    }
    out
}

/// Roles against the endpoints' metric shapes. In a disaggregated deployment the prefill
/// workers generate about one token per request and the decode workers generate the output;
/// prefill endpoints generating more than decode ones (by half again) means the roles given
/// are swapped or wrong. Detectable only where both roles export a generation counter;
/// a deployment whose requests generate one token each cannot be told apart.
/// On a contradiction the prefill and decode endpoints lose their roles (unresolved): the
/// facts that gave them cannot be trusted, so nothing is priced or attributed from them.
pub fn check_shapes(
    mut dep: Deployment,
    engines: &BTreeMap<Arc<str>, Engine>,
    generation: impl Fn(&str) -> Option<f64>,
    reasons: &mut Vec<Reason>,
) -> Deployment {
    let sum_of = |role: Role| {
        let urls: Vec<&Arc<str>> = dep
            .decisions
            .iter()
            .filter(|(_, d)| d.role == Some(role))
            .map(|(u, _)| u)
            .collect();
        if urls.is_empty() {
            return None;
        }
        urls.iter()
            .map(|u| generation(u))
            .try_fold(0.0, |acc, g| g.map(|g| acc + g))
    };
    let (Some(p), Some(d)) = (sum_of(Role::Prefill), sum_of(Role::Decode)) else {
        return dep;
    };
    if !(p > 0.0 && p > 1.5 * d) {
        return dep;
    }
    reasons.push(Reason::new(
        ReasonCode::RoleShapeConflict,
        format!(
            "the prefill endpoints generated {p:.0} tokens and the decode endpoints {d:.0}: prefill workers generate about one token per request, so the roles look swapped"
        ),
    ));
    let mut withdrawn = BTreeSet::new();
    for (url, d) in dep.decisions.iter_mut() {
        if matches!(d.role, Some(Role::Prefill | Role::Decode)) {
            *d = RoleDecision {
                role: None,
                source: RoleSource::Unresolved,
            };
            withdrawn.insert(Arc::clone(url));
        }
    }
    let mut dep = Deployment::new(dep.decisions, engines);
    dep.withdrawn = withdrawn;
    dep
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eng(labels: &[(&str, &str)]) -> EndpointFacts {
        EndpointFacts {
            has_engine: true,
            has_frontend: false,
            label_sets: Arc::new(LabelSets::of(vec![Arc::new(
                labels
                    .iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            )])),
        }
    }

    #[test]
    fn launch_first_then_labels_then_single() {
        let mut eps = BTreeMap::new();
        eps.insert(Arc::<str>::from("http://10.0.0.1:8000/metrics"), eng(&[]));
        eps.insert(
            Arc::<str>::from("http://10.0.0.2:8000/metrics"),
            eng(&[("engine_type", "decode")]),
        );
        let launch = LaunchFacts {
            prefill_endpoints: vec!["10.0.0.1:8000".into()],
            ..Default::default()
        };
        let mut reasons = Vec::new();
        let r = assign(&eps, Some(&launch), &mut reasons);
        assert!(reasons.is_empty(), "{reasons:?}");
        assert_eq!(r["http://10.0.0.1:8000/metrics"].role, Some(Role::Prefill));
        assert_eq!(r["http://10.0.0.1:8000/metrics"].source, RoleSource::Launch);
        assert_eq!(r["http://10.0.0.2:8000/metrics"].role, Some(Role::Decode));
        assert_eq!(r["http://10.0.0.2:8000/metrics"].source, RoleSource::Labels);

        let mut one = BTreeMap::new();
        one.insert(Arc::<str>::from("http://h:1/metrics"), eng(&[]));
        let agg = LaunchFacts {
            disaggregated: Some(false),
            ..Default::default()
        };
        let r = assign(&one, Some(&agg), &mut reasons);
        assert_eq!(r["http://h:1/metrics"].source, RoleSource::SingleEndpoint);
        let r = assign(&one, None, &mut reasons);
        assert_eq!(r["http://h:1/metrics"].role, None);
        assert_eq!(reasons.len(), 1);
        assert_eq!(reasons[0].code, ReasonCode::RoleUnresolved);
    }

    #[test]
    fn conflicts() {
        let mut eps = BTreeMap::new();
        eps.insert(
            Arc::<str>::from("http://10.0.0.1:8000/metrics"),
            eng(&[("dynamo_component", "backend")]),
        );
        let launch = LaunchFacts {
            prefill_endpoints: vec!["10.0.0.1:8000".into()],
            ..Default::default()
        };
        let mut reasons = Vec::new();
        let r = assign(&eps, Some(&launch), &mut reasons);
        assert_eq!(r["http://10.0.0.1:8000/metrics"].role, None);
        assert_eq!(reasons[0].code, ReasonCode::RoleConflict);
    }

    #[test]
    fn path_roles_and_frontends() {
        let mut eps = BTreeMap::new();
        eps.insert(Arc::<str>::from("http://h:1/prefill/metrics"), eng(&[]));
        eps.insert(
            Arc::<str>::from("http://h:2/metrics"),
            EndpointFacts {
                has_engine: false,
                has_frontend: true,
                label_sets: Arc::default(),
            },
        );
        let mut reasons = Vec::new();
        let r = assign(&eps, None, &mut reasons);
        assert_eq!(r["http://h:1/prefill/metrics"].role, Some(Role::Prefill));
        assert_eq!(r["http://h:2/metrics"].role, Some(Role::Frontend));
        assert!(reasons.is_empty());
    }

    #[test]
    fn role_sets_hold_roles_in_their_order() {
        for (i, r) in RoleSet::ALL.iter().enumerate() {
            assert_eq!(*r as usize, i);
        }
        assert!(RoleSet::ALL.windows(2).all(|w| w[0] < w[1]));
        let mut set = RoleSet::default();
        for r in [
            Role::Frontend,
            Role::Prefill,
            Role::Frontend,
            Role::Excluded,
        ] {
            set.insert(r);
        }
        assert_eq!(set.len(), 3);
        assert_eq!(set.first(), Some(Role::Prefill));
        assert_eq!(names(&set), "prefill, frontend, excluded");
        set.clear();
        assert_eq!((set.len(), set.first()), (0, None));
    }
}
