import Testing

extension Trait where Self == TimeLimitTrait {
    /// The time limit of a test that could hang (a server, a child
    /// process, a lock): it turns a hang into a named failure before CI
    /// gives up on the whole run. It is long because Swift Testing starts
    /// the clock when the test is scheduled, not when its body runs: on two
    /// cores, a test that blocks its thread (most of these do) can wait
    /// minutes behind the rest of the suite before it starts.
    static var againstAHang: Self { .timeLimit(.minutes(10)) }
}
