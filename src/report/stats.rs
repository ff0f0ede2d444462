//! Statistics of repeated figures, for the renderers and for the runs' aggregation, and
//! the two-sample test `dbcompare compare` judges a change by.

use statrs::distribution::{ContinuousCDF, StudentsT};

/// Median, minimum and maximum of some figures (the median of an even count is the mean of
/// the middle two).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spread {
    pub median: f64,
    pub min: f64,
    pub max: f64,
}

impl Spread {
    pub fn of(values: &[f64]) -> Option<Spread> {
        if values.is_empty() {
            return None;
        }
        let mut sorted = values.to_vec();
        sorted.sort_by(f64::total_cmp);
        let n = sorted.len();
        let median = if n % 2 == 1 {
            sorted[n / 2]
        } else {
            (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0
        };
        Some(Spread {
            median,
            min: sorted[0],
            max: sorted[n - 1],
        })
    }
}

/// The mean of some figures with the half-width of its confidence interval (Student's t,
/// `n - 1` degrees of freedom; absent below two figures).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Estimate {
    pub n: usize,
    pub mean: f64,
    pub half_width: Option<f64>,
}

impl Estimate {
    pub fn of(values: &[f64], confidence: f64) -> Option<Estimate> {
        let (n, mean, variance) = moments(values)?;
        let half_width =
            (n >= 2).then(|| t_quantile(confidence, (n - 1) as f64) * (variance / n as f64).sqrt());
        Some(Estimate {
            n,
            mean,
            half_width,
        })
    }
}

/// Welch's t-test of two samples that may differ in size and variance: the difference of
/// the means (`b - a`), its confidence interval's half-width and the two-sided p-value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Welch {
    pub difference: f64,
    pub half_width: f64,
    pub degrees_of_freedom: f64,
    pub p_value: f64,
}

impl Welch {
    /// `None` below two figures on either side (no variance to judge by).
    pub fn test(a: &[f64], b: &[f64], confidence: f64) -> Option<Welch> {
        let (na, mean_a, var_a) = moments(a)?;
        let (nb, mean_b, var_b) = moments(b)?;
        if na < 2 || nb < 2 {
            return None;
        }
        let (sa, sb) = (var_a / na as f64, var_b / nb as f64);
        let difference = mean_b - mean_a;
        let se = (sa + sb).sqrt();
        if se == 0.0 {
            // Identical figures on each side: the difference is exact.
            return Some(Welch {
                difference,
                half_width: 0.0,
                degrees_of_freedom: (na + nb - 2) as f64,
                p_value: if difference == 0.0 { 1.0 } else { 0.0 },
            });
        }
        let df = (sa + sb).powi(2) / (sa.powi(2) / (na - 1) as f64 + sb.powi(2) / (nb - 1) as f64);
        let t = difference / se;
        let dist = StudentsT::new(0.0, 1.0, df).expect("degrees of freedom are positive");
        Some(Welch {
            difference,
            half_width: t_quantile(confidence, df) * se,
            degrees_of_freedom: df,
            p_value: (2.0 * dist.sf(t.abs())).min(1.0),
        })
    }
}

/// Count, mean and sample variance (`n - 1`) of finite figures; `None` when there is none.
fn moments(values: &[f64]) -> Option<(usize, f64, f64)> {
    let finite: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    let n = finite.len();
    if n == 0 {
        return None;
    }
    let mean = finite.iter().sum::<f64>() / n as f64;
    let variance = if n < 2 {
        0.0
    } else {
        finite.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1) as f64
    };
    Some((n, mean, variance))
}

/// The two-sided critical value of Student's t for a confidence level.
fn t_quantile(confidence: f64, df: f64) -> f64 {
    StudentsT::new(0.0, 1.0, df)
        .expect("degrees of freedom are positive")
        .inverse_cdf(0.5 + confidence / 2.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn welch_against_a_worked_example() {
        // The same samples in SciPy 1.x, `ttest_ind(b, a, equal_var=False)`: t = 2.03566,
        // df = 15.4979, p = 0.059254, 95% interval of mean(b) - mean(a) = [-0.11254, 5.21254].
        let a = [27.5, 21.0, 19.0, 23.6, 17.0, 17.9, 16.9, 20.1, 21.9, 22.6];
        let b = [27.1, 22.0, 20.8, 23.4, 23.4, 23.5, 25.8, 22.0, 24.8, 20.2];
        let w = Welch::test(&a, &b, 0.95).unwrap();
        assert!((w.difference - 2.55).abs() < 1e-9, "{w:?}");
        assert!((w.degrees_of_freedom - 15.4979).abs() < 1e-3, "{w:?}");
        assert!((w.p_value - 0.059254).abs() < 1e-5, "{w:?}");
        assert!((w.half_width - 2.662538).abs() < 1e-5, "{w:?}");
    }

    #[test]
    fn samples_that_do_not_differ_are_not_significant() {
        let a = [100.0, 104.0, 98.0, 101.0, 97.0];
        let b = [99.0, 103.0, 100.0, 102.0, 96.0];
        let w = Welch::test(&a, &b, 0.95).unwrap();
        assert!(w.p_value > 0.5, "{w:?}");
        assert!(w.half_width > w.difference.abs(), "{w:?}");
    }

    #[test]
    fn samples_that_differ_are_significant() {
        let a = [100.0, 102.0, 98.0, 101.0, 99.0];
        let b = [120.0, 118.0, 121.0, 119.0, 122.0];
        let w = Welch::test(&a, &b, 0.95).unwrap();
        assert!(w.p_value < 0.001, "{w:?}");
        assert!((w.difference - 20.0).abs() < 1e-9);
    }

    #[test]
    fn too_few_figures_give_no_test() {
        assert_eq!(Welch::test(&[1.0], &[2.0, 3.0], 0.95), None);
        assert_eq!(Welch::test(&[], &[2.0, 3.0], 0.95), None);
        let exact = Welch::test(&[5.0, 5.0], &[5.0, 5.0], 0.95).unwrap();
        assert_eq!(exact.p_value, 1.0);
        let est = Estimate::of(&[10.0, 12.0, 14.0], 0.95).unwrap();
        assert_eq!(est.mean, 12.0);
        // t(0.975, 2) = 4.303, sd = 2, n = 3
        assert!((est.half_width.unwrap() - 4.303 * 2.0 / 3f64.sqrt()).abs() < 0.01);
        assert_eq!(Estimate::of(&[3.0], 0.95).unwrap().half_width, None);
    }

    #[test]
    fn spread_on_fixed_inputs() {
        assert_eq!(
            Spread::of(&[3.0, 1.0, 2.0]),
            Some(Spread {
                median: 2.0,
                min: 1.0,
                max: 3.0
            })
        );
        assert_eq!(
            Spread::of(&[4.0, 1.0, 3.0, 2.0]),
            Some(Spread {
                median: 2.5,
                min: 1.0,
                max: 4.0
            })
        );
        assert_eq!(Spread::of(&[7.0]).unwrap().median, 7.0);
        assert_eq!(Spread::of(&[]), None);
    }
}
