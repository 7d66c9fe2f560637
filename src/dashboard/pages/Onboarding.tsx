import { useState } from "preact/hooks"
import { can } from "../Access.js"
import { dash } from "../calls.js"
import { refreshMe, useSession } from "../Session.js"
import { Badge, Button, ErrorBox, Field, Form, Notice, Section, useAction } from "../ui.js"

const WHAT: Record<string, string> = {
  NotStarted: "Submit your business details to start. Test mode works already.",
  Submitted: "Your details are with our operators. Live mode unlocks once they approve them.",
  Approved: "Approved: live keys and live accounts are available.",
  Rejected: "Your details were not approved. Correct them and submit again."
}

export const OnboardingPage = () => {
  const s = useSession()!
  const status = s.me?.tenant.onboardingStatus ?? "NotStarted"
  const [f, setF] = useState({ legalName: "", rcNumber: "", address: "", contactPhone: "", website: "" })
  const field = (k: keyof typeof f) => (v: string) => setF({ ...f, [k]: v })
  const { busy, error, run } = useAction()
  const check = useAction()
  const [done, setDone] = useState(false)
  return (
    <>
      <Section title="Status">
        <p>Onboarding status: <strong id="onboarding-status"><Badge text={status} /></strong></p>
        <p>{WHAT[status]}</p>
        <Button busy={check.busy} onClick={() => check.run(refreshMe)}>Check status again</Button>
        <ErrorBox error={check.error} />
      </Section>
      {status !== "Approved" && can(s.me?.user.role, "onboarding") && (
        <Section title="Business details">
          <Form label="Business details" onSubmit={() => run(async () => {
            const body = Object.fromEntries(Object.entries(f).filter(([, v]) => v.trim() !== "").map(([k, v]) => [k, v.trim()]))
            await dash((c) => c.dashboard.onboarding({ payload: body }))
            await refreshMe()
            setDone(true)
          })}>
            <Field label="Legal name" name="legalName" value={f.legalName} onInput={field("legalName")} />
            <Field label="RC number (CAC registration)" name="rcNumber" value={f.rcNumber} onInput={field("rcNumber")} />
            <Field label="Address" name="address" value={f.address} onInput={field("address")} autoComplete="street-address" />
            <Field label="Contact phone" name="contactPhone" type="tel" value={f.contactPhone} onInput={field("contactPhone")} autoComplete="tel" />
            <Field label="Website" name="website" value={f.website} onInput={field("website")} />
            <ErrorBox error={error} />
            <Button type="submit" kind="primary" busy={busy}>Submit for approval</Button>
          </Form>
          {done && <Notice kind="ok">Submitted. An operator reviews your details.</Notice>}
        </Section>
      )}
    </>
  )
}
