//! Random search (paper Algorithm 7): random tests until the budget is used up; the
//! archive keeps the shortest covering test per target.

use super::{Archive, Search, Test, distinct};

impl Search<'_, '_> {
    /// Random search: random tests until the budget is used up.
    pub fn random(&mut self) -> Vec<Test> {
        let mut archive = Archive::new(self.targets);
        while !self.exec.finished() {
            let e = self.random_test();
            let n = archive.update(&e);
            self.charge(n);
        }
        distinct(&archive.best)
    }
}
