import { can, liveUnlocked } from "../Access.js"
import { useSession } from "../Session.js"
import { Badge, Notice, Section } from "../ui.js"

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
