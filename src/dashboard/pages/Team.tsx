import { useState } from "preact/hooks"
import { can } from "../Access.js"
import { dash } from "../calls.js"
import { useSession } from "../Session.js"
import { Badge, Button, ErrorBox, Field, Form, Notice, Section, Select, Table, useAction, useLoad } from "../ui.js"


export const TeamPage = () => {
  const s = useSession()!
  const users = useLoad(() => dash((c) => c.dashboard.listUsers({ urlParams: { take: 100 } })), [s.mode])
  const [f, setF] = useState({ email: "", password: "", role: "Member" })
  const act = useAction()
  return (
    <>
      {can(s.me?.user.role, "inviteUser") ? (
        <Section title="Invite a teammate">
          <Form label="Invite a teammate" onSubmit={() => act.run(async () => {
            await dash((c) => c.dashboard.inviteUser({ payload: { email: f.email.trim(), password: f.password, role: f.role as "Admin" | "Member" } }))
            setF({ email: "", password: "", role: "Member" })
            users.reload()
          })}>
            <div class="grid3">
              <Field label="E-mail" name="invite-email" type="email" value={f.email} onInput={(v) => setF({ ...f, email: v })} required />
              <Field label="Initial password" name="invite-password" type="password" value={f.password} onInput={(v) => setF({ ...f, password: v })} autoComplete="new-password" hint="At least 10 characters; share it with them privately" required />
              <Select label="Role" name="invite-role" value={f.role} onChange={(v) => setF({ ...f, role: v })} options={[["Member", "Member (reads, creates accounts)"], ["Admin", "Admin (everything but ownership)"]]} />
            </div>
            <ErrorBox error={act.error} />
            <Button type="submit" kind="primary" busy={act.busy}>Invite</Button>
          </Form>
        </Section>
      ) : <Notice>Inviting teammates needs an Owner or Admin.</Notice>}
      <Section title="Team">
        <ErrorBox error={users.error} />
        <Table caption="Dashboard users" head={["E-mail", "Role"]}>
          {users.data?.data.map((u) => <tr key={u.id}><td>{u.email}</td><td><Badge text={u.role} /></td></tr>)}
        </Table>
      </Section>
    </>
  )
}
