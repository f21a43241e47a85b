// Accounts of DESIGN.md §3: who am I, users (admin), user tokens, publishers, their tokens and members
// (services/accounts.ts).
import {
  acceptInvitation,
  addPublisherMember,
  createPublisher,
  createPublisherToken,
  createUser,
  createUserToken,
  declineInvitation,
  deletePublisherToken,
  deleteUserToken,
  getMe,
  listMyInvitations,
  listPublisherInvitations,
  listPublisherTokens,
  listUserTokens,
  removePublisherMember,
} from '../../contract/registry.js';
import { isEmailAddress, type User } from '../../contract/resources.js';
import { accessTo, allowMutation, requirePublisher, requireRole, requireUserToken } from '../access.js';
import type { RouteModule } from '../context.js';
import { conflict, forbidden, notFound } from '../errors.js';
import type { Principal } from '../route.js';
import { route } from '../route.js';
import type { TokenRow, UserRow } from '../store/registry-store.js';
import {
  claimAddress,
  createUserWithToken,
  invitee,
  issueToken,
  memberNamed,
  publisherChanges,
} from '../services/accounts.js';
import { addressInvitationView, changedRoleView, invitationView, memberView, publisherView } from '../views.js';
import { tokenInfo, userView } from '../services/user-lifecycle.js';
import { checkInvitationCap, checkPublisherCap } from '../services/creation-caps.js';

const me = (principal: Principal | null) => principal!;

/** Who am I, users (an admin's), and one's own tokens. */
const registerUserRoutes: RouteModule = (app, ctx) => {
  const { store } = ctx;

  route(app, ctx, getMe, async ({ principal }) => {
    const caller = me(principal);
    const user = (await store.getUser(caller.userId))!;
    if (caller.kind === 'pat') {
      const token = (await store.getToken(caller.tokenId))!;
      return {
        kind: 'pat' as const,
        publisher: { id: caller.publisherId },
        token: { id: token.id, name: token.name },
        user: { id: user.id, name: user.name },
      };
    }
    return { kind: 'user' as const, user: userView(user), publishers: await store.publishersOfUser(user.id) };
  });

  route(app, ctx, createUser, async ({ principal, input }) => {
    if (!me(principal).admin) throw forbidden('only an admin may create users');
    const { user, token } = await createUserWithToken(store, input().body);
    return { user: userView(user), token };
  });

  route(app, ctx, listUserTokens, async ({ principal }) => {
    requireUserToken(me(principal), 'list user tokens');
    return (await store.listTokens({ userId: me(principal).userId })).map(tokenInfo);
  });

  route(app, ctx, createUserToken, async ({ principal, input }) => {
    requireUserToken(me(principal), 'create user tokens');
    const { body } = input();
    return issueToken(store, { kind: 'user', userId: me(principal).userId, name: body.name });
  });

  route(app, ctx, deleteUserToken, async ({ params, principal }) => {
    requireUserToken(me(principal), 'revoke user tokens');
    const token = await store.getToken(params.tokenId);
    if (!token || token.kind !== 'user' || token.user_id !== me(principal).userId || token.revoked_at) {
      throw notFound(`token ${params.tokenId} not found among your user tokens`);
    }
    await store.revokeToken(token.id);
    return new Response(null, { status: 204 });
  });
};

/** Publishers and their access tokens. */
const registerPublisherRoutes: RouteModule = (app, ctx) => {
  const { store } = ctx;
  route(app, ctx, createPublisher, async ({ principal, input }) => {
    requireUserToken(me(principal), 'create publishers');
    const { body } = input();
    await checkPublisherCap(store, ctx.options.caps, me(principal));
    const created = await store.createPublisher(
      body.id,
      publisherChanges(body, undefined, me(principal).admin),
      me(principal).userId,
    );
    if (created === 'exists') throw conflict(`publisher ${body.id} already exists`, 'choose another publisher id');
    return publisherView(created, { rows: await store.listMembers(created.id), showEmails: true });
  });

  route(app, ctx, listPublisherTokens, async ({ params, principal }) => {
    const publisher = await requirePublisher(store, params.publisherId);
    requireRole(await accessTo(store, principal, publisher.id), 'owner');
    return (await store.listTokens({ publisherId: publisher.id })).map(tokenInfo);
  });

  route(app, ctx, createPublisherToken, async ({ params, principal, input }) => {
    const publisher = await requirePublisher(store, params.publisherId);
    allowMutation(await accessTo(store, principal, publisher.id), 'owner', publisher);
    const { body } = input();
    return issueToken(store, { kind: 'pat', userId: me(principal).userId, publisherId: publisher.id, name: body.name });
  });

  route(app, ctx, deletePublisherToken, async ({ params, principal }) => {
    const publisher = await requirePublisher(store, params.publisherId);
    // The owner's check first: a 404 before it told anyone with a token which ids are the publisher's tokens.
    allowMutation(await accessTo(store, principal, publisher.id), 'owner', publisher);
    const token = await store.getToken(params.tokenId);
    if (!token || token.publisher_id !== publisher.id || token.revoked_at) {
      throw notFound(`token ${params.tokenId} not found among the tokens of publisher ${publisher.id}`);
    }
    await store.revokeToken(token.id);
    return new Response(null, { status: 204 });
  });
};

/** Members and invitations. */
const registerMemberRoutes: RouteModule = (app, ctx) => {
  const { store } = ctx;
  route(app, ctx, addPublisherMember, async ({ params, principal, input }) => {
    const publisher = await requirePublisher(store, params.publisherId);
    allowMutation(await accessTo(store, principal, publisher.id), 'owner', publisher);
    const { body } = input();
    const named = (body.user ?? body.user_id)!;
    if (isEmailAddress(named)) {
      // Kept against the address, answered alike whether an account has it: the owner learns no one.
      await checkInvitationCap(store, ctx.options.caps, me(principal), publisher.id);
      const invitedBy = me(principal).userId;
      await store.inviteAddress({ publisherId: publisher.id, email: named, role: body.role, invitedBy });
      return addressInvitationView(publisher, body.role);
    }
    const user = await invitee(store, named);
    if (!(await store.getRole(publisher.id, user.id)))
      await checkInvitationCap(store, ctx.options.caps, me(principal), publisher.id);
    const outcome = await store.invite({
      publisherId: publisher.id,
      userId: user.id,
      role: body.role,
      invitedBy: me(principal).userId,
    });
    if (outcome === 'last-owner')
      throw conflict(`user ${user.id} is the last owner of publisher ${publisher.id}`, 'add another owner first');
    await store.audit({
      actorId: me(principal).userId,
      action: 'member.add',
      target: `publisher:${publisher.id}`,
      details: { user: user.id, role: body.role, outcome: outcome.kind },
    });
    return outcome.kind === 'member' ? changedRoleView(outcome.member) : invitationView(outcome.invitation);
  });

  route(app, ctx, removePublisherMember, async ({ params, principal }) => {
    const publisher = await requirePublisher(store, params.publisherId);
    // The owner's check first: a 404 before it told anyone with a token whom an owner had invited.
    allowMutation(await accessTo(store, principal, publisher.id), 'owner', publisher);
    // The invitation is withdrawn and the member removed, both: an invitation accepted in between
    // made a member, who must not stay after a 204.
    // The user is named as for an invitation: by id, e-mail or user name.
    const address = isEmailAddress(params.userId) && (await store.removeAddressInvitation(publisher.id, params.userId));
    const userId = await memberNamed(store, publisher.id, params.userId);
    if (userId === undefined && address) return new Response(null, { status: 204 });
    if (userId === undefined)
      throw notFound(`user ${params.userId} is neither a member of publisher ${publisher.id} nor invited to it`);
    const withdrawn = await store.removeInvitation(publisher.id, userId);
    const outcome = await store.removeMember(publisher.id, userId);
    if (outcome === 'not-member' && !withdrawn)
      throw notFound(`user ${params.userId} is neither a member of publisher ${publisher.id} nor invited to it`);
    if (outcome === 'last-owner')
      throw conflict(`user ${params.userId} is the last owner of publisher ${publisher.id}`, 'add another owner first');
    await store.audit({
      actorId: me(principal).userId,
      action: 'member.remove',
      target: `publisher:${publisher.id}`,
      details: { user: userId, removed: outcome === 'removed' ? 'member' : 'invitation' },
    });
    return new Response(null, { status: 204 });
  });

  route(app, ctx, listPublisherInvitations, async ({ params, principal }) => {
    const publisher = await requirePublisher(store, params.publisherId);
    requireRole(await accessTo(store, principal, publisher.id), 'owner');
    return (await store.listInvitations({ publisherId: publisher.id })).map(invitationView);
  });

  route(app, ctx, listMyInvitations, async ({ principal }) => {
    requireUserToken(me(principal), 'list invitations');
    await claimAddress(store, await store.getUser(me(principal).userId));
    return (await store.listInvitations({ userId: me(principal).userId })).map(invitationView);
  });

  route(app, ctx, acceptInvitation, async ({ params, principal }) => {
    requireUserToken(me(principal), 'accept invitations');
    const publisher = await requirePublisher(store, params.publisherId);
    await claimAddress(store, await store.getUser(me(principal).userId));
    const member = await store.acceptInvitation(publisher.id, me(principal).userId);
    if (!member)
      throw notFound(`you have no invitation to publisher ${publisher.id} (\`GET /users/me/invitations\` lists yours)`);
    return memberView(member, true);
  });

  route(app, ctx, declineInvitation, async ({ params, principal }) => {
    requireUserToken(me(principal), 'decline invitations');
    if (!(await store.removeInvitation(params.publisherId, me(principal).userId))) {
      throw notFound(`you have no invitation to publisher ${params.publisherId}`);
    }
    return new Response(null, { status: 204 });
  });
};

export const registerAccountRoutes: RouteModule = (app, ctx) => {
  registerUserRoutes(app, ctx);
  registerPublisherRoutes(app, ctx);
  registerMemberRoutes(app, ctx);
};
