import { useState } from "preact/hooks"
import { can } from "../Access.js"
import { dash, enc } from "../calls.js"
import { lagos } from "../Dates.js"
import { useSession } from "../Session.js"
import { Badge, Button, ErrorBox, Loading, Money, Notice, Section } from "../ui.js"
import { useLoad } from "../ui.js"
import { ReviewDecision, RiskReasons, type Transaction } from "./Transactions.js"

export const ReviewPage = () => {
  const s = useSession()!
  const q = useLoad(() => dash((c) => c.transactions.list({ urlParams: { status: "PendingReview", take: 100 } })), [s.mode])
  const [decided, setDecided] = useState<ReadonlyArray<Transaction>>([])
  const mayDecide = can(s.me?.user.role, "review")
  return (
    <>
      <Section title="Held for review">
        <p>Deposits whose risk score reached the review threshold wait here; their money is not available until approved.</p>
        {!mayDecide && <Notice>Only an Owner or Admin can approve or reject.</Notice>}
        <Button onClick={q.reload}>Refresh</Button>
        <ErrorBox error={q.error} />
        {q.loading && !q.data ? <Loading what="the queue" /> : q.data?.data.length === 0 ? <p class="muted" id="queue-empty">Nothing is waiting for review.</p> : (
          <ul class="queue">
            {q.data?.data.map((t) => (
              <li key={t.reference} class="queue-item card-inner">
                <div class="queue-head">
                  <strong><Money kobo={t.amountKobo} /></strong> into {t.accountRef ? <a href={`#/accounts/${enc(t.accountRef)}`}>{t.accountRef}</a> : "an unknown account"}
                  {" "}from {t.senderName ?? "unknown payer"} · risk <strong>{t.riskScore}</strong> · {lagos(t.paidAt)}
                  {" "}<a href={`#/transactions/${enc(t.reference)}`}>{t.reference}</a>
                </div>
                <RiskReasons reasons={t.riskReasons} />
                {mayDecide && <ReviewDecision t={t} onDecided={(n) => { setDecided([n, ...decided]); q.setData({ ...q.data!, data: q.data!.data.filter((x) => x.reference !== n.reference) }) }} />}
              </li>
            ))}
          </ul>
        )}
      </Section>
      {decided.length > 0 && (
        <Section title="Decided just now">
          <ul>{decided.map((t) => <li key={t.reference}>{t.reference}: <Badge text={t.status} /> ({t.review?.decision})</li>)}</ul>
        </Section>
      )}
    </>
  )
}
