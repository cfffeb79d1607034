//! "Did you mean ...?" for misspelt keys and names: the closest candidate by edit distance.

/// Edit distance over chars where insert, delete, substitute and swapping two adjacent chars
/// each cost 1 (Levenshtein plus transpositions, "optimal string alignment"): `cmp` is one typo
/// away from `cpm`.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
    // d[i][j]: distance between a[..i] and b[..j].
    let mut d = vec![vec![0usize; b.len() + 1]; a.len() + 1];
    for (i, row) in d.iter_mut().enumerate() {
        row[0] = i;
    }
    for (j, cell) in d[0].iter_mut().enumerate() {
        *cell = j;
    }
    for i in 1..=a.len() {
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut best = (d[i - 1][j - 1] + cost)
                .min(d[i - 1][j] + 1)
                .min(d[i][j - 1] + 1);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                best = best.min(d[i - 2][j - 2] + 1);
            }
            d[i][j] = best;
        }
    }
    d[a.len()][b.len()]
}

/// The candidate closest to `wrong`, if it is close enough to be a plausible typo: about a third
/// of the longer name's length apart (1 edit for up to 4 chars, 2 for 5 to 7, ...). Ties go to
/// the first candidate.
pub fn did_you_mean<'a, I>(wrong: &str, candidates: I) -> Option<&'a str>
where
    I: IntoIterator<Item = &'a str>,
{
    candidates
        .into_iter()
        .filter(|c| *c != wrong)
        .map(|c| (edit_distance(wrong, c), c))
        .filter(|&(d, c)| d <= ((wrong.chars().count().max(c.chars().count()) + 1) / 3).max(1))
        .min_by_key(|&(d, _)| d)
        .map(|(_, c)| c)
}

/// "; did you mean `x`?" or nothing, ready to append to a message.
pub fn hint<'a, I>(wrong: &str, candidates: I) -> String
where
    I: IntoIterator<Item = &'a str>,
{
    did_you_mean(wrong, candidates).map_or_else(String::new, |c| format!("; did you mean `{c}`?"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances() {
        assert_eq!(edit_distance("", ""), 0);
        assert_eq!(edit_distance("abc", ""), 3);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("windw", "window"), 1);
        assert_eq!(edit_distance("kitten", "sitting"), 3);
        assert_eq!(edit_distance("flaw", "lawn"), 2);
        assert_eq!(edit_distance("ü", "u"), 1);
        assert_eq!(edit_distance("cmp", "cpm"), 1);
        assert_eq!(edit_distance("ab", "ba"), 1);
        assert_eq!(edit_distance("ca", "abc"), 3);
    }

    #[test]
    fn suggests_only_plausible_typos() {
        let keys = [
            "inputs",
            "group_by",
            "window",
            "allowed_lateness",
            "aggregates",
        ];
        assert_eq!(did_you_mean("windw", keys), Some("window"));
        assert_eq!(did_you_mean("input", keys), Some("inputs"));
        assert_eq!(did_you_mean("groupby", keys), Some("group_by"));
        assert_eq!(did_you_mean("colour", keys), None);
        assert_eq!(did_you_mean("x", ["y"]), Some("y"));
        assert_eq!(did_you_mean("ab", ["xy"]), None);
        assert_eq!(did_you_mean("cnt", ["count", "sum"]), Some("count"));
        assert_eq!(did_you_mean("cmp", ["clicks", "cpm"]), Some("cpm"));
        assert_eq!(
            did_you_mean("median", ["count", "sum", "min", "max", "avg"]),
            None
        );
        assert_eq!(
            hint("clics", ["clicks", "late_clicks"]),
            "; did you mean `clicks`?"
        );
        assert_eq!(hint("zzz", ["clicks"]), "");
    }
}
