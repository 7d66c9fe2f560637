import { can, liveUnlocked } from "../Access.js"
import { dash } from "../calls.js"
import { count } from "../Plural.js"
import { useSession } from "../Session.js"
import { Badge, ErrorBox, Loading, Money, Notice, Section, useLoad } from "../ui.js"

/** Today in Lagos (WAT, UTC+1, no daylight saving): from its midnight to now. */
const lagosToday = () => {
  const day = new Date(Date.now() + 3_600_000).toISOString().slice(0, 10)
  return { day, from: new Date(`${day}T00:00:00.000+01:00`), to: new Date(`${day}T23:59:59.999+01:00`) }
}

/** Today's deposits (the transactions summary over the Lagos day): how many and how much, credited and in review. */
const Today = () => {
  const s = useSession()!
  const today = lagosToday()
  const summary = useLoad(() => dash((c) => c.transactions.summary({ urlParams: { from: today.from, to: today.to } })), [s.mode, today.day])
  if (summary.error) return <ErrorBox error={summary.error} />
  if (!summary.data) return <Loading what="today's figures" />
  const t = summary.data
  return (
    <div class="stats" id="today">
      <div class="stat"><span>Deposits today</span><strong><Money kobo={t.total.amountKobo} /></strong><small id="today-count">{count(t.total.count, "deposit")}</small></div>
      <div class="stat"><span>Credited</span><strong><Money kobo={t.successful.amountKobo} /></strong><small>{count(t.successful.count, "deposit")}</small></div>
      <div class="stat"><span>Pending review</span><strong><Money kobo={t.pendingReview.amountKobo} /></strong><small>{count(t.pendingReview.count, "deposit")}</small></div>
    </div>
  )
}

export const HomePage = () => {
  const s = useSession()!
  const me = s.me
  const status = me?.tenant.onboardingStatus
  const role = me?.user.role
  return (
    <>
      <Section title={`Welcome, ${me?.tenant.name ?? ""}`}>
        <p>Signed in as {me?.user.email} (<Badge text={role ?? ""} />), in <strong>{s.mode}</strong> mode. Onboarding: <Badge text={status ?? ""} />.</p>
        {!liveUnlocked(status) && <Notice kind="warn">Live mode unlocks when an operator approves your onboarding. <a href="#/onboarding">Onboarding</a></Notice>}
      </Section>
      <Section title={`Today (${s.mode} mode, Lagos time)`}>
        <Today />
      </Section>
      <Section title="Get started">
        <ol class="steps">
          {can(role, "onboarding") && !liveUnlocked(status) && <li><a href="#/onboarding">Submit your business details</a></li>}
          {can(role, "apiKeys") && <li><a href="#/keys">Create a test API key</a> for your integration</li>}
          <li><a href="#/accounts">Give a customer a virtual account</a> and, in test mode, simulate their transfer</li>
          <li><a href="#/review">Approve or reject risky deposits</a></li>
          {can(role, "webhooks") && <li><a href="#/webhooks">Add a webhook endpoint</a> to hear about payments</li>}
          <li><a href="#/insights">See how collections are going</a>, or <a href="#/copilot">ask the copilot</a></li>
        </ol>
      </Section>
    </>
  )
}
