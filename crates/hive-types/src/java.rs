//! Java's texts of numbers, which Hive prints: `Double.toString` and `Float.toString` (`1.0`,
//! `1.0E10`, `1.5E-5`, `NaN`, `Infinity`), used for doubles inside complex values and by
//! functions that return a number's text.

/// Java's `Double.toString`, which Hive uses for doubles inside complex values.
pub fn java_double(v: f64) -> String {
    java_number(v, format!("{v}"), format!("{v:e}"))
}

/// Java's `Float.toString`.
pub fn java_float(v: f32) -> String {
    java_number(f64::from(v), format!("{v}"), format!("{v:e}"))
}

fn java_number(v: f64, plain: String, sci: String) -> String {
    if v.is_nan() {
        return "NaN".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    let a = v.abs();
    if a == 0.0 || (1e-3..1e7).contains(&a) {
        if plain.contains('.') {
            plain
        } else {
            format!("{plain}.0")
        }
    } else {
        // Rust writes 1.5e-5 / 1e10; Java writes 1.5E-5 / 1.0E10.
        let (mantissa, exp) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
        let mantissa = if mantissa.contains('.') {
            mantissa.to_string()
        } else {
            format!("{mantissa}.0")
        };
        format!("{mantissa}E{exp}")
    }
}
